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

    /// Keeps these sockets counted for another lifetime: one round trip for all of them.
    /// - Parameter restoring: add back sockets that are gone, too (the node was reaped while
    ///   alive, or Redis lost them). Only for sockets the caller still holds; without it only
    ///   sockets still there are extended, so one closed meanwhile does not come back.
    public func refresh(_ sockets: [UserID: Set<String>], restoring: Bool = false) async throws(RoomcastError) {
        guard !sockets.isEmpty else { return }
        let expiry = Int(Timestamp.now().milliseconds) + lifetime.wholeMilliseconds
        var commands: [RedisCommand] = []
        commands.reserveCapacity(sockets.count * 2)
        for (user, userSockets) in sockets {
            let key = RedisKeys.userSockets(user)
            let mode: [any RedisArgument] = restoring ? [key] : [key, "XX"]
            commands.append(RedisCommand("ZADD", mode + userSockets.flatMap { [expiry, $0] as [any RedisArgument] }))
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
