/// Every event the server sends to sockets, by its Socket.IO name: the one list that Swift
/// publishers name events with, and that EventContractTests checks each script's published
/// frame against. The Lua side writes frames only in `_emit.lua`.
///
/// Room events travel on a room's channel with the offset of the room's stream; per-user events
/// to the user's nodes with the offset of the user's stream (see ``EventEnvelope``); volatile
/// ones have no offset; a few go to one socket only.
public enum ServerEvent: String, CaseIterable, Sendable {
    // Room events: the room's stream and channel.
    case elementCreated = "element:created"
    case elementUpdated = "element:updated"
    case elementTransformed = "element:transformed"
    case elementZIndexChanged = "element:z-index-changed"
    case elementDeleted = "element:deleted"
    case roomCleared = "room:cleared"
    case reactionAdded = "element:reaction:added"
    case reactionRemoved = "element:reaction:removed"
    case messageNew = "message:new"
    case roomPresence = "room:presence"

    // Volatile room events: relayed, never stored.
    case elementDrag = "element:drag"
    case cursorMove = "cursor:move"

    // Per-user events: the user's stream and channel.
    case elementCreatedGlobal = "element:created:global"
    case elementDeletedGlobal = "element:deleted:global"
    case roomClearedGlobal = "room:cleared:global"
    case roomSeen = "room:seen"
    case roomCreated = "room:created"
    case roomUpdated = "room:updated"
    case notificationNew = "notification:new"
    case badgeUpdated = "badge:updated"

    // To one socket: its join's snapshot, and refusals of events sent without an ack.
    case elementsBatch = "elements:batch"
    case error = "error"
    /// The socket's token expires soon: `{expiresAt}`; `auth:refresh` with a new one keeps it.
    case authExpiring = "auth:expiring"

    /// The events a script appends to a room's stream.
    public static let roomEvents: Set<ServerEvent> = [
        .elementCreated, .elementUpdated, .elementTransformed, .elementZIndexChanged, .elementDeleted, .roomCleared, .reactionAdded,
        .reactionRemoved, .messageNew, .roomPresence,
    ]

    /// The events appended to a user's stream.
    public static let userEvents: Set<ServerEvent> = [
        .elementCreatedGlobal, .elementDeletedGlobal, .roomClearedGlobal, .roomSeen, .roomCreated, .roomUpdated, .notificationNew,
        .badgeUpdated,
    ]
}
