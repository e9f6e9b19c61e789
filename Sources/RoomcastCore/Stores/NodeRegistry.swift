public import RedisClient

/// The live gateway nodes, each kept by its own heartbeat: a node's entry expires unless the node
/// refreshes it, so a crashed node drops out within one TTL.
///
/// Two keys in two cluster slots (`node:{<id>}` and `nodes:{registry}`), so every write is a
/// pipeline of single-key commands, never one script.
public struct NodeRegistry: Sendable {
    private let redis: any RedisClientProtocol

    /// Creates a registry over a client.
    public init(redis: any RedisClientProtocol) {
        self.redis = redis
    }

    /// Registers or refreshes `info` for another `ttl`, in one round trip.
    /// - Returns: the entry as written, with `updatedAt` now and `expiresAt` one `ttl` later.
    @discardableResult
    public func heartbeat(_ info: NodeInfo, ttl: Duration) async throws(RoomcastError) -> NodeInfo {
        var entry = info
        let now = Timestamp.now()
        entry.updatedAt = now
        entry.expiresAt = Timestamp(milliseconds: now.milliseconds + Int64(ttl.wholeMilliseconds))
        let key = RedisKeys.node(info.id)
        let replies = try await mappingRedisErrors { () throws(RedisError) in
            try await redis.pipeline([
                RedisCommand("HSET", [key] + entry.hashFields),
                RedisCommand("PEXPIRE", key, ttl.wholeMilliseconds),
                RedisCommand("ZADD", RedisKeys.nodeRegistry, Int(entry.expiresAt.milliseconds), info.id.rawValue),
                // Keeps the set to live nodes even when nobody reads it.
                RedisCommand("ZREMRANGEBYSCORE", RedisKeys.nodeRegistry, "-inf", "(\(now.milliseconds)"),
            ])
        }
        try Self.checkReplies(replies)
        return entry
    }

    /// The node `id` while its entry lives; `nil` once it expired or was removed.
    public func node(_ id: NodeID) async throws(RoomcastError) -> NodeInfo? {
        try await nodes([id]).first
    }

    /// Every live node, oldest first; expired ids are pruned from the registry on the way.
    public func liveNodes() async throws(RoomcastError) -> [NodeInfo] {
        let now = Timestamp.now().milliseconds
        let ids = try await mappingRedisErrors { () throws(RedisError) in
            let replies = try await redis.pipeline([
                RedisCommand("ZREMRANGEBYSCORE", RedisKeys.nodeRegistry, "-inf", "(\(now)"),
                RedisCommand("ZRANGE", RedisKeys.nodeRegistry, Int(now), "+inf", "BYSCORE"),
            ])
            return try [String](redisReply: replies[1])
        }
        return try await nodes(ids.compactMap { NodeID($0) }).sorted { ($0.startedAt, $0.id) < ($1.startedAt, $1.id) }
    }

    /// Takes node `id` out of the registry (its graceful shutdown).
    public func remove(_ id: NodeID) async throws(RoomcastError) {
        let replies = try await mappingRedisErrors { () throws(RedisError) in
            try await redis.pipeline([
                RedisCommand("DEL", RedisKeys.node(id)),
                RedisCommand("ZREM", RedisKeys.nodeRegistry, id.rawValue),
            ])
        }
        try Self.checkReplies(replies)
    }

    /// Reads the entries of `ids` in one pipeline (`HGETALL` and `PTTL` of each); gone ones are
    /// left out.
    private func nodes(_ ids: [NodeID]) async throws(RoomcastError) -> [NodeInfo] {
        guard !ids.isEmpty else { return [] }
        let commands = ids.flatMap { [RedisCommand("HGETALL", RedisKeys.node($0)), RedisCommand("PTTL", RedisKeys.node($0))] }
        let replies = try await mappingRedisErrors { () throws(RedisError) in try await redis.pipeline(commands) }
        try Self.checkReplies(replies)
        let now = Timestamp.now().milliseconds
        return ids.indices.compactMap { index in
            // PTTL -2: gone since the HGETALL; -1: no expiry (written by hand), shown as expiring now.
            guard case .integer(let remaining) = replies[2 * index + 1], remaining != -2 else { return nil }
            return NodeInfo(fields: replies[2 * index].fields, expiresAt: Timestamp(milliseconds: now + max(remaining, 0)))
        }
    }

    /// Throws the first error reply of a pipeline.
    private static func checkReplies(_ replies: [RedisReply]) throws(RoomcastError) {
        for case .error(let message) in replies {
            throw RoomcastError(RedisError(.reply, message))
        }
    }
}
