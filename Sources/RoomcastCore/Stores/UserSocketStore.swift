public import RedisClient

/// The sockets each user has connected, over every node, for `socket.max_per_user`.
///
/// Like presence, each socket lives as long as its node: a dead node's sockets are removed by a
/// reaper (``reap(_:node:)``, ``NodeReaper``); each also expires unless its node refreshes it,
/// a long backstop.
public struct UserSocketStore: Sendable {
    private let redis: any RedisClientProtocol
    /// How long a socket counts without a refresh.
    public var lifetime: Duration

    /// Creates a store over a client.
    public init(redis: any RedisClientProtocol, lifetime: Duration = .seconds(30)) {
        self.redis = redis
        self.lifetime = lifetime
    }

    /// Counts a new socket of `user`.
    /// - Returns: the offset of the user's newest event (`0-0` when none): the user's events after
    ///   it are the ones this socket gets.
    /// - Throws: `limit_exceeded` when the user already has `limit` sockets connected.
    @discardableResult
    public func open(_ socket: String, of user: UserID, limit: Int) async throws(RoomcastError) -> StreamOffset {
        try await open(socket, of: user, limit: limit, readingUser: false).offset
    }

    /// A socket counted for a user who exists, and what its CONNECT needs.
    public struct OpenedSocket: Sendable {
        /// The user's profile, read in the same call.
        public var user: User
        /// The offset of the user's newest event (`0-0` when none).
        public var offset: StreamOffset
    }

    /// Counts a new socket of `user` and reads the user in the same script: a CONNECT's one
    /// round trip.
    /// - Returns: nil, counting nothing, when there is no such user.
    /// - Throws: `limit_exceeded` when the user already has `limit` sockets connected.
    public func openConnected(_ socket: String, of user: UserID, limit: Int) async throws(RoomcastError) -> OpenedSocket? {
        let opened = try await open(socket, of: user, limit: limit, readingUser: true)
        guard let fields = opened.user else { return nil }
        guard let profile = User(fields: fields) else {
            throw RoomcastError(.internalError, "the user record of \(user) is damaged")
        }
        return OpenedSocket(user: profile, offset: opened.offset)
    }

    private func open(
        _ socket: String, of user: UserID, limit: Int, readingUser: Bool
    ) async throws(RoomcastError) -> (offset: StreamOffset, user: [String: String]?) {
        let now = Timestamp.now()
        let opened = try await redis.call(
            RoomcastFunctions.UserSocketOpen(
                user: user, socket: socket, limit: limit, now: now,
                expiry: Timestamp(milliseconds: now.milliseconds + Int64(lifetime.wholeMilliseconds)), readingUser: readingUser
            )
        )
        switch opened.outcome {
        case .counted: return (opened.offset, opened.user)
        case .noUser: return (opened.offset, nil)
        case .overLimit:
            throw RoomcastError(.limitExceeded, "a user can have at most \(limit) sockets connected at once: close one first")
        }
    }

    /// Stops counting a socket that closed.
    public func close(_ socket: String, of user: UserID) async throws(RoomcastError) {
        _ = try await mappingRedisErrors { () throws(RedisError) in
            try await redis.send(RedisCommand("ZREM", RedisKeys.userSockets(user), socket))
        }
    }

    /// Keeps these sockets counted for another lifetime: one round trip for all of them. Only
    /// sockets still counted are extended, so one closed meanwhile does not come back.
    /// - Returns: the sockets that were no longer counted (Redis lost them or let them expire
    ///   while it was away, or a reaper took them out): the caller puts back those it still
    ///   holds with ``restore(_:)``. The user's events do not reach a node for a socket that is
    ///   not counted, so the caller reads back what they missed.
    @discardableResult
    public func refresh(_ sockets: [UserID: Set<String>]) async throws(RoomcastError) -> [UserID: Set<String>] {
        guard !sockets.isEmpty else { return [:] }
        let expiry = Int(Timestamp.now().milliseconds) + lifetime.wholeMilliseconds
        let users = sockets.map { (user: $0.key, members: Array($0.value)) }
        var commands: [RedisCommand] = []
        commands.reserveCapacity(users.count * 3)
        for (user, members) in users {
            let key = RedisKeys.userSockets(user)
            commands.append(RedisCommand("ZMSCORE", [key] + members.map { $0 as any RedisArgument }))
            commands.append(RedisCommand("ZADD", [key, "XX"] + members.flatMap { [expiry, $0] as [any RedisArgument] }))
            commands.append(RedisCommand("PEXPIREAT", key, expiry))
        }
        let replies = try await mappingRedisErrors { () throws(RedisError) in
            try await redis.pipeline(commands)
        }
        var gone: [UserID: Set<String>] = [:]
        for (index, (user, members)) in users.enumerated() {
            guard case .array(let scores) = replies[index * 3] else { continue }
            for (member, score) in zip(members, scores) where score.isNull {
                gone[user, default: []].insert(member)
            }
        }
        return gone
    }

    /// Counts these sockets again (gone from Redis while their node still holds them), for
    /// another lifetime.
    public func restore(_ sockets: [UserID: Set<String>]) async throws(RoomcastError) {
        guard !sockets.isEmpty else { return }
        let expiry = Int(Timestamp.now().milliseconds) + lifetime.wholeMilliseconds
        var commands: [RedisCommand] = []
        for (user, userSockets) in sockets {
            let key = RedisKeys.userSockets(user)
            commands.append(RedisCommand("ZADD", [key] + userSockets.flatMap { [expiry, $0] as [any RedisArgument] }))
            commands.append(RedisCommand("PEXPIREAT", key, expiry))
        }
        _ = try await mappingRedisErrors { () throws(RedisError) in
            try await redis.pipeline(commands)
        }
    }

    /// Stops counting every socket of node `node` (a dead node) for `user`.
    /// - Returns: the number of sockets removed.
    @discardableResult
    public func reap(_ user: UserID, node: NodeID) async throws(RoomcastError) -> Int {
        try await redis.call(RoomcastFunctions.UserSocketsReap(user: user, node: node)).removed
    }
}
