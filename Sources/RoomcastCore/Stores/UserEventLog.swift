import NIOCore
public import RedisClient

/// A user's event stream read back: the per-user events a node's pub/sub link missed while it
/// was down, as they were published (`_emit.lua`).
public struct UserEventLog: Sendable {
    private let redis: any RedisClientProtocol
    /// The most events read back at once.
    public var maximumReplay: Int

    /// Creates a log reader over a client.
    public init(redis: any RedisClientProtocol, maximumReplay: Int = 1_000) {
        self.redis = redis
        self.maximumReplay = maximumReplay
    }

    /// Every event of `user` after `offset`, oldest first; `nil` when the user's stream no longer
    /// holds them all (trimmed) or there are more than ``maximumReplay``.
    public func events(of user: UserID, after offset: StreamOffset) async throws(RoomcastError) -> [EventEnvelope]? {
        try await StreamBackfill.entries(of: RedisKeys.userStream(user), after: offset, limit: maximumReplay, redis: redis)?
            .compactMap { reply -> EventEnvelope? in
                guard let entry = RedisStreamEntry(reply), let frame = entry.fields["f"] else { return nil }
                return EventEnvelope(offset: Substring(String(buffer: entry.id)), frame: frame)
            }
    }
}
