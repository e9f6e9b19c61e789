public import RedisClient

/// Removes what dead nodes left in Redis: their sockets' presence members (announced with
/// `room:presence`) and their sockets' places in their users' counts.
///
/// Each node keeps an index of where it put members (`node:{<id>}:rooms`, `node:{<id>}:users`,
/// written by ``NodeIndex``). Every node runs a reaper after its heartbeat over the ids whose
/// registry entries expired. A reaper claims a batch of the dead node's index on a lease
/// (`node_reap_claim.lua`: the entries move to `node:{<id>}:reaping`, scored by when the claim
/// lapses), removes that node's members room by room and user by user, then releases the batch.
/// Reapers on several nodes share the work and never hold the same entry at once; the entries
/// of a reaper that died mid-batch are claimed again once its lease lapsed. Once the index is
/// empty and no claim is held, the id leaves the registry. Claiming stops as soon as the node
/// holds its lease again: a node that was only paused is left alone (it puts back what was
/// reaped, see ``NodeRegistry/Beat/lapsed``).
public struct NodeReaper: Sendable {
    private let redis: any RedisClientProtocol
    private let presence: PresenceStore
    private let sockets: UserSocketStore
    private let registry: NodeRegistry
    /// Rooms (and users) claimed from a dead node's index per step.
    public var batchSize: Int
    /// How long a claim holds: a reaper that dies with a batch claimed leaves it to the next
    /// reaper once this has passed. A batch takes far less (its functions run at once); one that
    /// outlasts its claim is only reaped twice, which changes nothing the second time.
    public var claimLease: Duration

    /// Creates a reaper over the stores it cleans.
    public init(
        redis: any RedisClientProtocol, presence: PresenceStore, sockets: UserSocketStore, batchSize: Int = 100, claimLease: Duration = .seconds(30)
    ) {
        self.redis = redis
        self.presence = presence
        self.sockets = sockets
        self.registry = NodeRegistry(redis: redis)
        self.batchSize = batchSize
        self.claimLease = claimLease
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
    /// - Parameter budget: no batch is claimed once this much time passed (what is left stays in
    ///   the index for the next call), so that a node's heartbeat is never held up long.
    /// - Throws: the first Redis failure (entries of a failed batch are released to be claimed again).
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
            guard case .claimed(let rooms, let users, let pending) = try await claim(node) else { return }
            if rooms.isEmpty && users.isEmpty {
                // Another reaper's batch is under way: it, or the one after its lease, finishes.
                if pending == 0, try await registry.drop(node) { reaped.dropped.append(node) }
                return
            }
            reaped.rooms += rooms.count
            reaped.users += users.count
            let (members, sockets) = try await clean(node, rooms: rooms, users: users)
            reaped.members += members
            reaped.sockets += sockets
        }
    }

    /// Claims the next batch of `node`'s index: its entries this reaper now holds for
    /// ``claimLease``, or `.alive`.
    func claim(_ node: NodeID) async throws(RoomcastError) -> RoomcastFunctions.NodeReapClaim.Reply.Claim {
        try await redis.call(
            RoomcastFunctions.NodeReapClaim(node: node, now: .now(), lease: claimLease, batch: batchSize, lifetime: presence.lifetime)
        ).claim
    }

    /// Removes `node`'s members from `rooms` and its sockets from `users`' counts, all at once,
    /// then releases the batch's claim. The entries whose call failed are released as lapsed, so
    /// the next claim takes them again first.
    private func clean(_ node: NodeID, rooms: [RoomID], users: [UserID]) async throws(RoomcastError) -> (members: Int, sockets: Int) {
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
        var done: [String] = []
        var failed: [String] = []
        var firstError: RoomcastError?
        for (entry, result) in results {
            switch (entry, result) {
            case (.room, .success(let count)):
                members += count
                done.append(entry.claim)
            case (.user, .success(let count)):
                removedSockets += count
                done.append(entry.claim)
            case (_, .failure(let error)):
                failed.append(entry.claim)
                firstError = firstError ?? error
            }
        }
        // A release that fails leaves the claims to lapse: the work is claimed and done again.
        var release: [RedisCommand] = []
        if !done.isEmpty { release.append(RedisCommand("ZREM", [RedisKeys.nodeReaping(node)] + done)) }
        if !failed.isEmpty { release.append(RedisCommand("ZADD", [RedisKeys.nodeReaping(node)] + failed.flatMap { [0, $0] as [any RedisArgument] })) }
        _ = try? await redis.pipeline(release)
        if let firstError { throw firstError }
        return (members, removedSockets)
    }

    /// One entry of a dead node's index.
    private enum Entry: Sendable {
        case room(RoomID)
        case user(UserID)

        /// The entry as `node:{<id>}:reaping` holds it.
        var claim: String {
            switch self {
            case .room(let room): "room:\(room)"
            case .user(let user): "user:\(user)"
            }
        }
    }
}
