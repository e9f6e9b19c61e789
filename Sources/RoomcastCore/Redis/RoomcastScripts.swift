import Foundation
public import RedisClient

/// The Lua scripts of every mutation, read once from this module's resources.
public enum RoomcastScripts {
    /// `room_create.lua`: a room and its participants.
    public static let roomCreate = script("room_create")
    /// `room_rename.lua`: set or clear a room's name, for participants.
    public static let roomRename = script("room_rename")
    /// `message_send.lua`: store, append and publish a chat message (presence layout: it takes
    /// expired sockets out before counting who has the room open).
    public static let messageSend = RedisScript(
        name: "message_send", source: ["_request", "_emit", "_presence", "message_send"].map(source).joined(separator: "\n")
    )

    /// `element_create.lua`
    public static let elementCreate = elementScript("element_create")
    /// `element_update.lua`
    public static let elementUpdate = elementScript("element_update")
    /// `element_transform.lua`
    public static let elementTransform = elementScript("element_transform")
    /// `element_front.lua`
    public static let elementFront = elementScript("element_front")
    /// `element_delete.lua`
    public static let elementDelete = elementScript("element_delete")
    /// `room_clear.lua`
    public static let roomClear = elementScript("room_clear")
    /// `elements_snapshot.lua`
    public static let elementsSnapshot = elementScript("elements_snapshot")

    /// `presence_join.lua`: a socket opened the room; the user's unseen counts reset.
    public static let presenceJoin = presenceScript("presence_join")
    /// `presence_leave.lua`
    public static let presenceLeave = presenceScript("presence_leave")
    /// `presence_refresh.lua`: a node's periodic keep-alive of its sockets' presence.
    public static let presenceRefresh = presenceScript("presence_refresh")
    /// `presence_reap.lua`: a dead node's members leave a room, announced.
    public static let presenceReap = presenceScript("presence_reap")

    /// `user_socket_open.lua`: count a new socket of a user, unless the user has too many.
    public static let userSocketOpen = script("user_socket_open")
    /// `user_sockets_reap.lua`: a dead node's sockets stop counting for a user.
    public static let userSocketsReap = script("user_sockets_reap")

    /// `node_reap_claim.lua`: the next batch of a dead node's rooms and users, unless it is alive.
    public static let nodeReapClaim = script("node_reap_claim")
    /// `node_registry_drop.lua`: a reaped node leaves the registry unless it heartbeat meanwhile.
    public static let nodeRegistryDrop = script("node_registry_drop")

    /// `reaction_toggle.lua`: add or remove the user's heart.
    public static let reactionToggle = elementScript("reaction_toggle")

    /// `room_replay.lua`: the events a rejoining client missed, if all are still kept.
    public static let roomReplay = script("room_replay")

    /// `notification_create.lua`: store, count, announce and enqueue pushes for a notification.
    public static let notificationCreate = userEventScript("notification_create")
    /// `notification_read.lua`
    public static let notificationRead = userEventScript("notification_read")
    /// `notification_read_all.lua`
    public static let notificationReadAll = userEventScript("notification_read_all")
    /// `user_event_publish.lua`: append a per-user event to the user's stream and publish it.
    public static let userEventPublish = userEventScript("user_event_publish")
    /// `push_token_claim.lua`: give a device token to a user unless another installation holds it.
    public static let pushTokenClaim = script("push_token_claim")
    /// `owner_release.lua`: forget a device token's or an email's owner if it is still this user.
    public static let ownerRelease = script("owner_release")
    /// `push_job_finish.lua`: acknowledge a push job, dead-lettering it when it failed.
    public static let pushJobFinish = script("push_job_finish")

    /// `rate_limit_hit.lua`: count a request against a fixed window shared by every node.
    public static let rateLimitHit = script("rate_limit_hit")

    /// Every script, for loading (and syntax-checking) at start-up.
    public static let all = [
        roomCreate, roomRename, messageSend, elementCreate, elementUpdate, elementTransform, elementFront, elementDelete, roomClear,
        elementsSnapshot, presenceJoin, presenceLeave, presenceRefresh, reactionToggle, notificationCreate, notificationRead,
        notificationReadAll, pushTokenClaim, ownerRelease, pushJobFinish, roomReplay, userSocketOpen, userEventPublish, rateLimitHit,
        presenceReap, userSocketsReap, nodeReapClaim, nodeRegistryDrop,
    ]

    private static func script(_ name: String) -> RedisScript {
        RedisScript(name: name, source: source(name))
    }

    /// Element scripts share `_request.lua`, `_emit.lua`, `_reactions.lua`, `_shared.lua` and `_counts.lua`, prepended here in
    /// that order (a Lua local must be defined before its callers): Redis scripts cannot import.
    private static func elementScript(_ name: String) -> RedisScript {
        let prelude = ["_request", "_emit", "_reactions", "_shared", "_counts"].map(source).joined(separator: "\n")
        return RedisScript(name: name, source: prelude + "\n" + source(name))
    }

    /// Scripts that emit per-user events write their frames with `_emit.lua`.
    private static func userEventScript(_ name: String) -> RedisScript {
        RedisScript(name: name, source: source("_emit") + "\n" + source(name))
    }

    /// Presence scripts share `_emit.lua` and `_presence.lua`.
    private static func presenceScript(_ name: String) -> RedisScript {
        RedisScript(name: name, source: source("_emit") + "\n" + source("_presence") + "\n" + source(name))
    }

    private static func source(_ name: String) -> String {
        guard let url = Bundle.module.url(forResource: name, withExtension: "lua", subdirectory: "Scripts"),
            let source = try? String(contentsOf: url, encoding: .utf8)
        else {
            // The resource bundle ships beside the binary; without it no mutation can run.
            fatalError("Lua script \(name).lua is missing from the RoomcastCore resource bundle")
        }
        return source
    }
}
