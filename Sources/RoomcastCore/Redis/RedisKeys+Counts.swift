extension RedisKeys {
    /// Hash: user id → elements created in the room since that user last had it open.
    public static func roomUnseenElements(_ id: RoomID) -> String { "room:{\(id)}:unseen" }
    /// Hash: user id → the room's `messageSeq` (room hash) when that user last had the room
    /// open; their unseen messages are the difference while they are away.
    public static func roomMessageReads(_ id: RoomID) -> String { "room:{\(id)}:read:messages" }
    /// Sorted set: who has the room open, one member per socket (`<userId>|<socketId>`), scored
    /// by the epoch-ms time it expires unless its node refreshes it.
    public static func roomPresence(_ id: RoomID) -> String { "room:{\(id)}:presence" }
    /// Sorted set: every user id, scored by account creation (epoch ms), for paging users.
    public static let allUsers = "users"
}
