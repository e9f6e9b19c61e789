public import RedisClient

/// The live gateway nodes, each kept by its own heartbeat: a node's entry expires unless the node
/// refreshes it, so a crashed node drops out within one TTL. An expired id stays in
/// `nodes:{registry}` until a reaper (``NodeReaper``) removed what the node left in Redis.
///
/// Two keys in two cluster slots (`node:{<id>}` and `nodes:{registry}`), so every write is a
/// pipeline of single-key commands, never one script.
public struct NodeRegistry: Sendable {
    private let redis: any RedisClientProtocol

    /// Creates a registry over a client.
    public init(redis: any RedisClientProtocol) {
        self.redis = redis
    }

    /// What a heartbeat wrote and found.
    public struct Beat: Sendable {
        /// The entry as written, with `updatedAt` now and `expiresAt` one `ttl` later.
        public var entry: NodeInfo
        /// The node's hash was gone before this beat: its lease had lapsed (a pause longer than
        /// its TTL, or Redis lost it), so reapers may have removed its members. Also true on a
        /// node's first beat.
        public var lapsed: Bool
        /// Other nodes whose entries expired and wait for a reaper (``NodeReaper``), at most 100.
        public var expired: [NodeID]
    }

    /// Registers or refreshes `info` for another `ttl`, in one round trip, and lists the nodes
    /// whose entries expired.
    @discardableResult
    public func heartbeat(_ info: NodeInfo, ttl: Duration) async throws(RoomcastError) -> Beat {
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
                // Expired entries stay until reaped: they are the reapers' work list.
                RedisCommand("ZRANGE", RedisKeys.nodeRegistry, "-inf", "(\(now.milliseconds)", "BYSCORE", "LIMIT", 0, 100),
            ])
        }
        try Self.checkReplies(replies)
        // HSET counts the fields it created: all of them when the hash was gone.
        let created = (try? Int(redisReply: replies[0])) ?? 0
        let expired = ((try? [String](redisReply: replies[3])) ?? []).compactMap { NodeID($0) }.filter { $0 != info.id }
        return Beat(entry: entry, lapsed: created > 0, expired: expired)
    }

    /// The node `id` while its entry lives; `nil` once it expired or was removed.
    public func node(_ id: NodeID) async throws(RoomcastError) -> NodeInfo? {
        try await nodes([id]).first
    }

    /// Every live node, oldest first. A read only: expired ids stay for the reapers.
    public func liveNodes() async throws(RoomcastError) -> [NodeInfo] {
        let now = Timestamp.now().milliseconds
        let ids = try await mappingRedisErrors { () throws(RedisError) in
            try await redis.send(RedisCommand("ZRANGE", RedisKeys.nodeRegistry, Int(now), "+inf", "BYSCORE"), as: [String].self)
        }
        return try await nodes(ids.compactMap { NodeID($0) }).sorted { ($0.startedAt, $0.id) < ($1.startedAt, $1.id) }
    }

    /// Takes node `id` out of the registry (its graceful shutdown).
    /// - Parameter holdingNothing: the node removed every member and socket it put in Redis: its
    ///   index goes too. Otherwise its entry is left expired (scored 0) with its index, for
    ///   another node's reaper to clean up what is left.
    public func remove(_ id: NodeID, holdingNothing: Bool = true) async throws(RoomcastError) {
        let commands =
            holdingNothing
            ? [
                RedisCommand("DEL", RedisKeys.node(id), RedisKeys.nodeRooms(id), RedisKeys.nodeUsers(id)),
                RedisCommand("ZREM", RedisKeys.nodeRegistry, id.rawValue),
            ]
            : [RedisCommand("DEL", RedisKeys.node(id)), RedisCommand("ZADD", RedisKeys.nodeRegistry, 0, id.rawValue)]
        let replies = try await mappingRedisErrors { () throws(RedisError) in try await redis.pipeline(commands) }
        try Self.checkReplies(replies)
    }

    /// Takes a reaped node's expired entry out of the registry, unless it heartbeat meanwhile.
    /// - Returns: whether it was removed.
    @discardableResult
    public func drop(_ id: NodeID) async throws(RoomcastError) -> Bool {
        let now = Int(Timestamp.now().milliseconds)
        let reply = try await mappingRedisErrors { () throws(RedisError) in
            try await redis.evaluate(RoomcastScripts.nodeRegistryDrop, keys: [RedisKeys.nodeRegistry], arguments: [now, id.rawValue])
        }
        return (try? Int(redisReply: reply)) == 1
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
