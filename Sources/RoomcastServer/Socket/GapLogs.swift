import RoomcastCore

/// Where a node reads back the events its pub/sub link missed: a room channel's from the room's
/// stream, a user's from the user's stream.
struct GapLogs: Sendable {
    let rooms: RoomEventLog
    let users: UserEventLog

    /// The events of `channel` after `offset`; none for a channel of another kind, `nil` when its
    /// stream no longer holds them all.
    func events(of channel: String, after offset: StreamOffset) async throws(RoomcastError) -> [EventEnvelope]? {
        if let room = RedisKeys.room(ofChannel: channel) {
            return try await rooms.events(of: room, after: offset)
        }
        if let user = RedisKeys.user(ofChannel: channel) {
            return try await users.events(of: user, after: offset)
        }
        return []
    }
}
