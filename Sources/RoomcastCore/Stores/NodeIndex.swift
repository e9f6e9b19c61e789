public import RedisClient

/// One node's index of where it put members: the rooms where its sockets are present
/// (`node:{<id>}:rooms`) and the users whose sockets it counts (`node:{<id>}:users`), for the
/// reaper (``NodeReaper``) to visit when the node dies.
///
/// The node adds a room or user once, when it first puts a member there, not per join; stale
/// entries are harmless (the reaper finds nothing of the node there). Both sets expire after the
/// members' backstop unless the node refreshes them with its members.
public struct NodeIndex: Sendable {
    private let redis: any RedisClientProtocol
    /// The node whose index this is.
    public let node: NodeID
    /// How long the index lives without a refresh: the members' backstop.
    public var lifetime: Duration

    /// Creates the index of `node` over a client.
    public init(redis: any RedisClientProtocol, node: NodeID, lifetime: Duration) {
        self.redis = redis
        self.node = node
        self.lifetime = lifetime
    }

    /// Adds rooms and users (one round trip), extending both sets' lifetime.
    public func add(rooms: some Collection<RoomID> = [RoomID](), users: some Collection<UserID> = [UserID]()) async throws(RoomcastError) {
        var commands: [RedisCommand] = []
        let milliseconds = lifetime.wholeMilliseconds
        if !rooms.isEmpty {
            commands.append(RedisCommand("SADD", [RedisKeys.nodeRooms(node)] + rooms.map(\.rawValue)))
            commands.append(RedisCommand("PEXPIRE", RedisKeys.nodeRooms(node), milliseconds))
        }
        if !users.isEmpty {
            commands.append(RedisCommand("SADD", [RedisKeys.nodeUsers(node)] + users.map(\.rawValue)))
            commands.append(RedisCommand("PEXPIRE", RedisKeys.nodeUsers(node), milliseconds))
        }
        try await run(commands)
    }

    /// Removes rooms and users the node no longer holds members in (one round trip).
    public func remove(rooms: some Collection<RoomID> = [RoomID](), users: some Collection<UserID> = [UserID]()) async throws(RoomcastError) {
        var commands: [RedisCommand] = []
        if !rooms.isEmpty { commands.append(RedisCommand("SREM", [RedisKeys.nodeRooms(node)] + rooms.map(\.rawValue))) }
        if !users.isEmpty { commands.append(RedisCommand("SREM", [RedisKeys.nodeUsers(node)] + users.map(\.rawValue))) }
        try await run(commands)
    }

    /// The rooms and users in the index now.
    public func entries() async throws(RoomcastError) -> (rooms: Set<RoomID>, users: Set<UserID>) {
        let replies = try await mappingRedisErrors { () throws(RedisError) in
            try await redis.pipeline([RedisCommand("SMEMBERS", RedisKeys.nodeRooms(node)), RedisCommand("SMEMBERS", RedisKeys.nodeUsers(node))])
        }
        let rooms = ((try? [String](redisReply: replies[0])) ?? []).compactMap { RoomID($0) }
        let users = ((try? [String](redisReply: replies[1])) ?? []).compactMap { UserID($0) }
        return (Set(rooms), Set(users))
    }

    private func run(_ commands: [RedisCommand]) async throws(RoomcastError) {
        guard !commands.isEmpty else { return }
        let replies = try await mappingRedisErrors { () throws(RedisError) in try await redis.pipeline(commands) }
        for case .error(let message) in replies {
            throw RoomcastError(RedisError(.reply, message))
        }
    }
}
