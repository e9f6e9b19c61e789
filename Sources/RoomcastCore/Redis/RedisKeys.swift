/// Every Redis key and channel Roomcast uses, each built in one place.
///
/// The part in braces is the Redis Cluster hash tag: all of one room's keys and its channel share
/// `{<roomId>}`, all of one user's share `{<userId>}`, so a script about one room touches one
/// slot. docs/internals/redis-keys.md lists these for operators (`redis-cli HGETALL 'room:{<id>}'`).
public enum RedisKeys {
    // MARK: Users

    /// Hash: `id`, `username`, `displayName`, `firstName`, `lastName`, `email`, `avatarUrl`,
    /// `passwordHash`, `createdAt` (epoch ms).
    public static func user(_ id: UserID) -> String { "user:{\(id)}" }
    /// Sorted set: the user's room ids, scored by when the user joined them (epoch ms); lists sort
    /// by each room's `updatedAt` when read.
    public static func userRooms(_ id: UserID) -> String { "user:{\(id)}:rooms" }
    /// Sorted set: the user's connected sockets (`<socketId>`), scored by when they expire (epoch
    /// ms) unless their node refreshes them; its size is checked against `socket.max_per_user`.
    public static func userSockets(_ id: UserID) -> String { "user:{\(id)}:sockets" }
    /// Stream: the user's per-user events as published (field `f`, the frame); an entry id is the
    /// event's offset. About 200 kept, expiring a day after the last; written by `_emit.lua`,
    /// which derives it from ``userChannel(_:)``.
    public static func userStream(_ id: UserID) -> String { "user:{\(id)}:stream" }
    /// String: the user id owning an email (lowercased); `SET NX` makes emails unique.
    public static func email(_ address: String) -> String { "email:{\(ProfileChanges.emailKey(address))}" }
    /// String: the user id owning a username (lowercased); `SET NX` makes names unique.
    public static func username(_ name: String) -> String { "username:{\(name.lowercased())}" }

    // MARK: Rooms

    /// Hash: `id`, `name`, `createdBy`, `createdAt`, `updatedAt` (epoch ms), `elementCount`.
    public static func room(_ id: RoomID) -> String { "room:{\(id)}" }
    /// Hash: participant user id → that user's public profile as JSON, kept current by profile
    /// changes; elements reference their creator by id and take the profile from here when sent.
    public static func roomProfiles(_ id: RoomID) -> String { "room:{\(id)}:profiles" }
    /// Set: the participants' user ids.
    public static func roomParticipants(_ id: RoomID) -> String { "room:{\(id)}:participants" }
    /// Stream: chat messages (`id`, `userId`, `text`, `createdAt`), newest last.
    public static func roomMessages(_ id: RoomID) -> String { "room:{\(id)}:messages" }
    /// Stream: the room's events as sent to clients; an entry id is the event's `offset`.
    /// Fields `p` and `s` hold the frame before and after the offset; an event that differs per
    /// recipient holds `pa` and `pb` (the two frames before it), `s`, and `u` (the users who get `pa`).
    public static func roomStream(_ id: RoomID) -> String { "room:{\(id)}:stream" }

    /// The mutations a client may retry with a request id; each keeps its own replies, so one id
    /// used for two kinds of mutation is two requests, and a retry never gets another kind's reply.
    public enum RequestOperation: String, Sendable {
        case elementCreate = "element_create"
        case messageSend = "message_send"
        case reactionToggle = "reaction_toggle"
    }

    /// String (expires after a day): the recorded reply of `user`'s `operation` with the request id
    /// `request` in the room, returned again when the client retries it (see `_request.lua`).
    public static func roomRequest(_ room: RoomID, user: UserID, operation: RequestOperation, request: RequestID) -> String {
        "room:{\(room)}:request:\(user):\(operation.rawValue):\(request)"
    }

    // MARK: Channels

    /// Pub/sub channel of a room's events, for every node with a socket in the room.
    public static func roomChannel(_ id: RoomID) -> String { "room:{\(id)}:events" }
    /// The room whose channel `channel` is; `nil` for any other channel.
    public static func room(ofChannel channel: String) -> RoomID? {
        guard channel.hasPrefix("room:{"), channel.hasSuffix("}:events") else { return nil }
        return RoomID(String(channel.dropFirst("room:{".count).dropLast("}:events".count)))
    }

    /// Pub/sub channel of the per-user events for `node`'s sockets of the users routed to
    /// `slotTag` (``NodeEventRouting``): one per slot on a Redis Cluster, so that an event of a
    /// user goes to each node holding the user's sockets on its channel of the user's slot (so on
    /// the user's shard), one per node on a single server. A node subscribes one for its first
    /// user routed to it and keeps it. The payload is `<userId> <offset> <frame>`.
    public static func nodeEvents(_ node: NodeID, slotTag: String) -> String { "node-events:{\(slotTag)}:\(node)" }
    /// ``nodeEvents(_:slotTag:)`` up to the node id, for `user`: what the functions that emit
    /// per-user events complete with each node id found in the user's sockets.
    public static func nodeEventsRoute(forUser user: UserID, routing: NodeEventRouting) -> String {
        "node-events:{\(routing.slotTag(forUser: user))}:"
    }

    /// The name under which a node groups one user's local sockets and follows the offset of the
    /// user's events (for the library, a room of the user's sockets); not a Redis channel: the
    /// events arrive on ``nodeEvents(_:slotTag:)``.
    public static func userChannel(_ id: UserID) -> String { "user:{\(id)}:events" }
    /// The user whose group `channel` is; `nil` for any other name.
    public static func user(ofChannel channel: String) -> UserID? {
        guard channel.hasPrefix("user:{"), channel.hasSuffix("}:events") else { return nil }
        return UserID(String(channel.dropFirst("user:{".count).dropLast("}:events".count)))
    }
}
