public import RedisClient

/// The live gateway nodes, each kept by its own heartbeat: a node's entry expires unless the node
/// refreshes it, so a crashed node drops out within one TTL. An expired id stays in
/// `nodes:{registry}` until a reaper (``NodeReaper``) removed what the node left in Redis.
///
/// Two keys in two cluster slots (`node:{<id>}` and `nodes:{registry}`), so a heartbeat is two
/// requests sent together, never one function: the node's hash and its expiry, its lease, in one
/// step (`node_heartbeat.lua`), and the registry's entry beside it.
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
        let fields = entry.hashFields
        async let lease = Self.renew(info.id, fields, ttl: ttl, redis)
        let listed = await Self.results { () throws(RedisError) in
            try await redis.pipeline([
                RedisCommand("ZADD", RedisKeys.nodeRegistry, Int(entry.expiresAt.milliseconds), info.id.rawValue),
                // Expired entries stay until reaped: they are the reapers' work list.
                RedisCommand("ZRANGE", RedisKeys.nodeRegistry, "-inf", "(\(now.milliseconds)", "BYSCORE", "LIMIT", 0, 100),
            ])
        }
        let lapsed = try await lease.get()
        let replies = try listed.get()
        try Self.checkReplies(replies)
        let expired = ((try? [String](redisReply: replies[1])) ?? []).compactMap { NodeID($0) }.filter { $0 != info.id }
        return Beat(entry: entry, lapsed: lapsed, expired: expired)
    }

    /// Writes node `id`'s hash and its expiry in one step; answers whether it held no lease before.
    private static func renew(_ id: NodeID, _ fields: [String], ttl: Duration, _ redis: any RedisClientProtocol) async -> Result<Bool, RoomcastError> {
        await results { () throws(RedisError) in try await redis.run(RoomcastFunctions.NodeHeartbeat(node: id, ttl: ttl, fields: fields)).lapsed }
    }

    /// `operation`'s value or its failure, as a value (for two requests sent together).
    private static func results<Value>(_ operation: () async throws(RedisError) -> Value) async -> Result<Value, RoomcastError> {
        do {
            return .success(try await operation())
        } catch {
            return .failure(RoomcastError(error))
        }
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
                RedisCommand("DEL", RedisKeys.node(id), RedisKeys.nodeRooms(id), RedisKeys.nodeUsers(id), RedisKeys.nodeReaping(id)),
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
        try await redis.call(RoomcastFunctions.NodeRegistryDrop(node: id, now: .now())).dropped
    }

    /// A node whose lease lapsed and whose entry waits for reapers: what is left of its index.
    public struct ExpiredNode: Sendable, Hashable, Codable {
        /// The node's id.
        public var id: NodeID
        /// When its entry expired (0 for a node that stopped and left its members to reapers).
        public var expiredAt: Timestamp
        /// Rooms in its index not taken by a reaper yet (`node:{<id>}:rooms`).
        public var rooms: Int
        /// Users in its index not taken by a reaper yet (`node:{<id>}:users`).
        public var users: Int
        /// Entries claimed by reapers and not released yet (`node:{<id>}:reaping`), a reaper's
        /// batch under way or one a dead reaper left for the next.
        public var claimed: Int
    }

    /// The nodes whose entries expired and that reapers have not finished with, longest expired
    /// first (at most `limit`). A read only.
    public func expiredNodes(limit: Int = 100) async throws(RoomcastError) -> [ExpiredNode] {
        let now = Timestamp.now().milliseconds
        let scores = try await mappingRedisErrors { () throws(RedisError) in
            try await redis.send(
                RedisCommand("ZRANGE", RedisKeys.nodeRegistry, "-inf", "(\(now)", "BYSCORE", "LIMIT", 0, limit, "WITHSCORES"), as: RedisFields.self
            ).values
        }
        let expired = scores.compactMap { id, score in NodeID(id).map { ($0, Int64(Double(score) ?? 0)) } }.sorted { ($0.1, $0.0) < ($1.1, $1.0) }
        guard !expired.isEmpty else { return [] }
        let counts = try await mappingRedisErrors { () throws(RedisError) in
            try await redis.pipeline(expired.flatMap { id, _ in
                [RedisCommand("SCARD", RedisKeys.nodeRooms(id)), RedisCommand("SCARD", RedisKeys.nodeUsers(id)), RedisCommand("ZCARD", RedisKeys.nodeReaping(id))]
            })
        }
        try Self.checkReplies(counts)
        let sizes = counts.map { (try? Int(redisReply: $0)) ?? 0 }
        return zip(expired, stride(from: 0, to: sizes.count, by: 3)).map { node, first in
            ExpiredNode(id: node.0, expiredAt: Timestamp(milliseconds: node.1), rooms: sizes[first], users: sizes[first + 1], claimed: sizes[first + 2])
        }
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
