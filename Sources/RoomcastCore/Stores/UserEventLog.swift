import NIOCore
public import RedisClient

/// A user's event stream read back: the per-user events a node's pub/sub link missed while it
/// was down, as they were published (`_user_emit.lua`).
public struct UserEventLog: Sendable {
    private let redis: RedisClient
    /// The most events read back at once.
    public var maximumReplay: Int

    /// Creates a log reader over a client.
    public init(redis: RedisClient, maximumReplay: Int = 1_000) {
        self.redis = redis
        self.maximumReplay = maximumReplay
    }

    /// Every event of `user` after `offset` still in the user's stream, oldest first.
    public func events(of user: UserID, after offset: StreamOffset) async throws(RoomcastError) -> [EventEnvelope] {
        let reply = try await mappingRedisErrors { () throws(RedisError) in
            try await redis.send(RedisCommand("XRANGE", RedisKeys.userStream(user), "(\(offset)", "+", "COUNT", maximumReplay))
        }
        guard case .array(let entries) = reply else { return [] }
        return entries.compactMap { reply -> EventEnvelope? in
            guard let entry = RedisStreamEntry(reply), let frame = entry.fields["f"] else { return nil }
            return EventEnvelope(offset: Substring(String(buffer: entry.id)), frame: frame)
        }
    }
}
