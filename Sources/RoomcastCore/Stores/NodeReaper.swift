public import RedisClient

/// Removes what dead nodes left in Redis: their sockets' presence members (announced with
/// `room:presence`) and their sockets' places in their users' counts.
///
/// Each node keeps an index of where it put members (`node:{<id>}:rooms`, `node:{<id>}:users`,
/// written by ``NodeIndex``). Every node runs a reaper after its heartbeat over the ids whose
/// registry entries expired: it pops the dead node's index in batches (`SPOP`, so reapers on
/// several nodes share the work and never take the same entry twice), removes that node's
/// members room by room and user by user, and once the index is empty takes the id out of the
/// registry. Popping stops as soon as the node's hash exists again: a node that was only paused
/// is left alone (it puts back what was reaped, see ``NodeRegistry/Beat/lapsed``).
public struct NodeReaper: Sendable {
    private let redis: any RedisClientProtocol
    private let presence: PresenceStore
    private let sockets: UserSocketStore
    private let registry: NodeRegistry
    /// Rooms (and users) taken from a dead node's index per step.
    public var batchSize: Int

    /// Creates a reaper over the stores it cleans.
    public init(redis: any RedisClientProtocol, presence: PresenceStore, sockets: UserSocketStore, batchSize: Int = 100) {
        self.redis = redis
        self.presence = presence
        self.sockets = sockets
        self.registry = NodeRegistry(redis: redis)
        self.batchSize = batchSize
    }

    /// What one call reaped.
    public struct Reaped: Sendable, Equatable {
        /// Nodes whose index this call emptied and whose registry entry it removed.
        public var dropped: [NodeID] = []
        /// Room entries this call took from dead nodes' indexes.
        public var rooms = 0
        /// User entries this call took from dead nodes' indexes.
        public var users = 0
        /// Presence members removed.
        public var members = 0
        /// Counted sockets removed.
        public var sockets = 0

        /// Nothing reaped.
        public init() {}
    }

    /// Reaps each of `nodes`, expired ids from ``NodeRegistry/heartbeat(_:ttl:)``; one found alive
    /// is skipped.
    /// - Parameter budget: no batch is taken once this much time passed (what is left stays in
    ///   the index for the next call), so that a node's heartbeat is never held up long.
    /// - Throws: the first Redis failure (entries of a failed batch are put back in the index).
    public func reap(_ nodes: [NodeID], within budget: Duration? = nil) async throws(RoomcastError) -> Reaped {
        let clock = ContinuousClock()
        let deadline = budget.map { clock.now + $0 }
        var reaped = Reaped()
        for node in nodes {
            try await reap(node, into: &reaped, until: deadline)
        }
        return reaped
    }

    private func reap(_ node: NodeID, into reaped: inout Reaped, until deadline: ContinuousClock.Instant?) async throws(RoomcastError) {
        while true {
            if let deadline, ContinuousClock.now >= deadline { return }
            guard let (rooms, users) = try await claim(node) else { return }
            if rooms.isEmpty && users.isEmpty {
                if try await registry.drop(node) { reaped.dropped.append(node) }
                return
            }
            reaped.rooms += rooms.count
            reaped.users += users.count
            let (members, sockets) = try await clean(node, rooms: rooms, users: users)
            reaped.members += members
            reaped.sockets += sockets
        }
    }

    /// The next batch of `node`'s index, or nil when the node is alive.
    private func claim(_ node: NodeID) async throws(RoomcastError) -> (rooms: [RoomID], users: [UserID])? {
        let keys = [RedisKeys.node(node), RedisKeys.nodeRooms(node), RedisKeys.nodeUsers(node)]
        let reply = try await mappingRedisErrors { () throws(RedisError) in
            try await redis.evaluate(RoomcastScripts.nodeReapClaim, keys: keys, arguments: [batchSize])
        }
        guard case .array(let parts) = reply else { return nil }
        guard parts.count == 2, let rooms = try? [String](redisReply: parts[0]), let users = try? [String](redisReply: parts[1]) else {
            throw RoomcastError(.internalError, "unexpected reply from node_reap_claim")
        }
        return (rooms.compactMap { RoomID($0) }, users.compactMap { UserID($0) })
    }

    /// Removes `node`'s members from `rooms` and its sockets from `users`' counts, all at once.
    /// Entries whose call failed go back into the node's index for the next reaper.
    private func clean(_ node: NodeID, rooms: [RoomID], users: [UserID]) async throws(RoomcastError) -> (members: Int, sockets: Int) {
        enum Entry: Sendable {
            case room(RoomID)
            case user(UserID)
        }
        let (presence, sockets) = (presence, sockets)
        let results = await withTaskGroup(of: (Entry, Result<Int, RoomcastError>).self) { group in
            for entry in rooms.map(Entry.room) + users.map(Entry.user) {
                group.addTask {
                    let outcome: Result<Int, RoomcastError>
                    do throws(RoomcastError) {
                        switch entry {
                        case .room(let room): outcome = .success(try await presence.reap(room, node: node))
                        case .user(let user): outcome = .success(try await sockets.reap(user, node: node))
                        }
                    } catch {
                        outcome = .failure(error)
                    }
                    // Awaited first, the pair made after: Swift 6.3 at -O miscompiles
                    // `return (entry, .success(try await …))` inside `do`/`catch`. It drops the write
                    // of `entry` into the task's result, made before the suspension, because the
                    // `catch` writes it again; the parent then copies an uninitialised `Entry`.
                    return (entry, outcome)
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        var members = 0
        var removedSockets = 0
        var failedRooms: [RoomID] = []
        var failedUsers: [UserID] = []
        var firstError: RoomcastError?
        for (entry, result) in results {
            switch (entry, result) {
            case (.room, .success(let count)): members += count
            case (.user, .success(let count)): removedSockets += count
            case (.room(let room), .failure(let error)):
                failedRooms.append(room)
                firstError = firstError ?? error
            case (.user(let user), .failure(let error)):
                failedUsers.append(user)
                firstError = firstError ?? error
            }
        }
        guard let firstError else { return (members, removedSockets) }
        var putBack: [RedisCommand] = []
        if !failedRooms.isEmpty { putBack.append(RedisCommand("SADD", [RedisKeys.nodeRooms(node)] + failedRooms.map(\.rawValue))) }
        if !failedUsers.isEmpty { putBack.append(RedisCommand("SADD", [RedisKeys.nodeUsers(node)] + failedUsers.map(\.rawValue))) }
        _ = try? await redis.pipeline(putBack)
        throw firstError
    }
}
