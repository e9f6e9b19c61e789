import RedisClient
import RoomcastTestSupport
import Testing

@testable import RoomcastCore

/// NodeReaper on a real Redis: a dead node's presence members and socket counts go, announced,
/// found through the node's index; live nodes are left alone; reapers share the work.
@Suite("NodeReaper against a real redis-server")
struct NodeReaperTests {
    static let dead = NodeID("deadnode")!
    static let live = NodeID("livenode")!

    /// A socket id of `node`, as Engine.IO session ids are (the node's id, then 20 characters).
    static func socket(_ node: NodeID, _ suffix: String) -> String {
        node.rawValue + String(repeating: "0", count: 20 - suffix.count) + suffix
    }

    static func info(_ id: NodeID) -> NodeInfo {
        NodeInfo(id: id, address: "http://127.0.0.1:1", startedAt: Timestamp(milliseconds: 1_000), sockets: 0)
    }

    /// Registers `node` as a node whose lease lapsed: its hash gone, its registry entry expired.
    static func kill(_ node: NodeID, _ redis: any RedisClientProtocol) async throws {
        _ = try await redis.send(RedisCommand("DEL", RedisKeys.node(node)))
        _ = try await redis.send(RedisCommand("ZADD", RedisKeys.nodeRegistry, 1, node.rawValue))
    }

    /// What a node does when a socket of `user` opens and joins `room`: counts it, indexes the
    /// user and room, adds the member.
    static func hold(
        _ node: NodeID, _ socket: String, of user: UserID, in rooms: [RoomID], _ redis: any RedisClientProtocol
    ) async throws {
        let index = NodeIndex(redis: redis, node: node, lifetime: .seconds(600))
        try await index.add(rooms: rooms, users: [user])
        try await UserSocketStore(redis: redis, lifetime: .seconds(600)).open(socket, of: user, limit: 20)
        for room in rooms {
            try await PresenceStore(redis: redis, lifetime: .seconds(600)).join(room, user: user, socket: socket)
        }
    }

    static func members(_ redis: any RedisClientProtocol, _ room: RoomID) async throws -> Set<String> {
        Set(try await redis.send(RedisCommand("ZRANGE", RedisKeys.roomPresence(room), 0, -1), as: [String].self))
    }

    static func sockets(_ redis: any RedisClientProtocol, _ user: UserID) async throws -> Set<String> {
        Set(try await redis.send(RedisCommand("ZRANGE", RedisKeys.userSockets(user), 0, -1), as: [String].self))
    }

    static func reaper(_ redis: any RedisClientProtocol, batchSize: Int = 100) -> NodeReaper {
        NodeReaper(redis: redis, presence: PresenceStore(redis: redis), sockets: UserSocketStore(redis: redis), batchSize: batchSize)
    }

    @Test("a dead node's members leave its rooms, announced with room:presence; its sockets stop counting; a live node's stay")
    func reapsDeadNodeOnly() async throws {
        try await withTestRedis { redis, server in
            let f = try await PresenceStoreTests.fixture(redis)
            let registry = NodeRegistry(redis: redis)
            try await registry.heartbeat(Self.info(Self.dead), ttl: .seconds(60))
            try await registry.heartbeat(Self.info(Self.live), ttl: .seconds(60))
            // Alice has a socket on each node, Bob one on the node that dies, Carol one on the live node.
            try await Self.hold(Self.dead, Self.socket(Self.dead, "a"), of: f.alice.id, in: [f.room], redis)
            try await Self.hold(Self.live, Self.socket(Self.live, "a"), of: f.alice.id, in: [f.room], redis)
            try await Self.hold(Self.dead, Self.socket(Self.dead, "b"), of: f.bob.id, in: [f.room], redis)
            try await Self.hold(Self.live, Self.socket(Self.live, "c"), of: f.carol.id, in: [f.room], redis)

            try await Self.kill(Self.dead, redis)
            let beat = try await registry.heartbeat(Self.info(Self.live), ttl: .seconds(60))
            #expect(beat.expired == [Self.dead])
            #expect(!beat.lapsed)
            try await withSubscriber(server, to: [f.channel]) { inbox in
                let reaped = try await Self.reaper(redis).reap(beat.expired)
                #expect(reaped.dropped == [Self.dead])
                #expect(reaped.rooms == 1 && reaped.users == 2 && reaped.members == 2 && reaped.sockets == 2, "\(reaped)")
                // Bob is gone, announced; Alice stays (her other socket), Carol stays.
                let published = try #require(try await inbox.publications(1).first)
                try PresenceStoreTests.expectPresence(published, f.room, [f.alice, f.carol])
            }
            #expect(
                try await Self.members(redis, f.room)
                    == [PresenceStore.member(user: f.alice.id, socket: Self.socket(Self.live, "a")), PresenceStore.member(user: f.carol.id, socket: Self.socket(Self.live, "c"))]
            )
            #expect(try await Self.sockets(redis, f.alice.id) == [Self.socket(Self.live, "a")])
            #expect(try await Self.sockets(redis, f.bob.id).isEmpty)
            #expect(try await Self.sockets(redis, f.carol.id) == [Self.socket(Self.live, "c")])
            // The dead node is gone from the registry with its index; the live one keeps its own.
            #expect(try await redis.send(RedisCommand("ZRANGE", RedisKeys.nodeRegistry, 0, -1), as: [String].self) == ["livenode"])
            #expect(try await redis.send(RedisCommand("EXISTS", RedisKeys.nodeRooms(Self.dead), RedisKeys.nodeUsers(Self.dead)), as: Int.self) == 0)
            let liveIndex = try await NodeIndex(redis: redis, node: Self.live, lifetime: .seconds(60)).entries()
            #expect(liveIndex.rooms == [f.room])
            #expect(liveIndex.users == [f.alice.id, f.carol.id])
            // Nothing left: a second pass reaps nothing.
            #expect(try await Self.reaper(redis).reap([Self.dead]) == NodeReaper.Reaped())
        }
    }

    @Test("a node whose entry expired but whose hash exists (it beat again, or its clock is ahead) is left alone")
    func liveNodeUntouched() async throws {
        try await withTestRedis { redis, _ in
            let f = try await PresenceStoreTests.fixture(redis)
            try await NodeRegistry(redis: redis).heartbeat(Self.info(Self.live), ttl: .seconds(60))
            try await Self.hold(Self.live, Self.socket(Self.live, "a"), of: f.alice.id, in: [f.room], redis)
            _ = try await redis.send(RedisCommand("ZADD", RedisKeys.nodeRegistry, 1, Self.live.rawValue))

            #expect(try await Self.reaper(redis).reap([Self.live]) == NodeReaper.Reaped())
            #expect(try await Self.members(redis, f.room) == [PresenceStore.member(user: f.alice.id, socket: Self.socket(Self.live, "a"))])
            #expect(try await Self.sockets(redis, f.alice.id) == [Self.socket(Self.live, "a")])
            #expect(try await redis.send(RedisCommand("ZSCORE", RedisKeys.nodeRegistry, Self.live.rawValue)).string == "1")
            #expect(try await NodeIndex(redis: redis, node: Self.live, lifetime: .seconds(60)).entries().rooms == [f.room])
        }
    }

    @Test("reapers on several nodes share a dead node's index: every room and user is reaped exactly once, the entry dropped once")
    func concurrentReapersShareTheWork() async throws {
        try await withTestRedis(poolSize: 4) { redis, server in
            let users = try await LiveFixture.users(redis, 2, prefix: "r")
            let store = RoomStore(redis: redis)
            var created: [RoomID] = []
            for _ in 0..<40 {
                created.append(try await store.create(by: users[0].id, with: [users[1].id], name: nil).id)
            }
            let rooms = created
            try await Self.hold(Self.dead, Self.socket(Self.dead, "a"), of: users[0].id, in: rooms, redis)
            try await Self.hold(Self.dead, Self.socket(Self.dead, "b"), of: users[1].id, in: rooms, redis)
            try await Self.kill(Self.dead, redis)

            try await withSubscriber(server, to: rooms.map(RedisKeys.roomChannel)) { inbox in
                // Small batches, so that the reapers interleave.
                let results = try await withThrowingTaskGroup(of: NodeReaper.Reaped.self) { group in
                    for _ in 0..<3 {
                        group.addTask { try await Self.reaper(redis, batchSize: 3).reap([Self.dead]) }
                    }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
                #expect(results.map(\.rooms).reduce(0, +) == 40, "\(results)")
                #expect(results.map(\.users).reduce(0, +) == 2, "\(results)")
                #expect(results.map(\.members).reduce(0, +) == 80, "\(results)")
                #expect(results.map(\.sockets).reduce(0, +) == 2, "\(results)")
                #expect(results.flatMap(\.dropped) == [Self.dead])
                // One room:presence per room, announcing it empty.
                let published = try await inbox.publications(40)
                for publication in published {
                    #expect(try publication.event().payload["activeUserIds"] == [])
                }
                try await inbox.fence(redis, on: rooms.map(RedisKeys.roomChannel))
                #expect(inbox.received.count == 40)
            }
            for room in rooms {
                #expect(try await Self.members(redis, room).isEmpty)
            }
            #expect(try await redis.send(RedisCommand("ZCARD", RedisKeys.nodeRegistry), as: Int.self) == 0)
        }
    }

    @Test("a reaper out of time budget takes no batch: what is left stays in the index for the next call")
    func budget() async throws {
        try await withTestRedis { redis, _ in
            let f = try await PresenceStoreTests.fixture(redis)
            try await Self.hold(Self.dead, Self.socket(Self.dead, "a"), of: f.alice.id, in: [f.room], redis)
            try await Self.kill(Self.dead, redis)
            #expect(try await Self.reaper(redis).reap([Self.dead], within: .zero) == NodeReaper.Reaped())
            #expect(try await NodeIndex(redis: redis, node: Self.dead, lifetime: .seconds(60)).entries().rooms == [f.room])
            #expect(try await Self.members(redis, f.room).count == 1)
            let reaped = try await Self.reaper(redis).reap([Self.dead], within: .seconds(60))
            #expect(reaped.members == 1 && reaped.dropped == [Self.dead], "\(reaped)")
        }
    }

    @Test("a node reaped while alive finds its lease lapsed at its next heartbeat")
    func lapseSeenByHeartbeat() async throws {
        try await withTestRedis { redis, _ in
            let registry = NodeRegistry(redis: redis)
            try await registry.heartbeat(Self.info(Self.live), ttl: .seconds(60))
            #expect(try await registry.heartbeat(Self.info(Self.live), ttl: .seconds(60)).lapsed == false)
            // A pause longer than its TTL: its hash expired and a reaper may have taken its members.
            try await Self.kill(Self.live, redis)
            _ = try await Self.reaper(redis).reap([Self.live])
            let beat = try await registry.heartbeat(Self.info(Self.live), ttl: .seconds(60))
            #expect(beat.lapsed)
            #expect(try await registry.liveNodes().map(\.id) == [Self.live])
        }
    }

    /// A reaper's claim is a lease: one that dies between taking a batch and running its functions
    /// must not leave those rooms and users to the members' backstop (an hour).
    @Test("a reaper that dies with a batch claimed keeps the node in the registry, and the next reaper takes the batch once the claim lapsed")
    func deadReapersBatchClaimedAgain() async throws {
        try await withTestRedis { redis, _ in
            let f = try await PresenceStoreTests.fixture(redis)
            try await Self.hold(Self.dead, Self.socket(Self.dead, "a"), of: f.alice.id, in: [f.room], redis)
            try await Self.hold(Self.dead, Self.socket(Self.dead, "b"), of: f.bob.id, in: [f.room], redis)
            try await Self.kill(Self.dead, redis)

            // A reaper claims the batch, then dies before its functions run.
            let claim = try await Self.reaper(redis).claim(Self.dead)
            guard case .claimed(let rooms, let users, let pending) = claim else {
                Issue.record("claimed nothing: \(claim)")
                return
            }
            #expect(rooms == [f.room] && Set(users) == [f.alice.id, f.bob.id] && pending == 0)
            // Another reaper finds the index empty but the claim held: it reaps nothing and
            // leaves the node in the registry for whoever finishes the batch.
            #expect(try await Self.reaper(redis).reap([Self.dead]) == NodeReaper.Reaped())
            #expect(try await Self.members(redis, f.room).count == 2)
            #expect(try await redis.send(RedisCommand("ZSCORE", RedisKeys.nodeRegistry, Self.dead.rawValue)).string == "1")
            #expect(try await Inspector(redis: redis).nodes().expired.map(\.claimed) == [3])

            // The dead reaper's claim lapses (its lease passed with nobody to release it).
            let claimed = try await redis.send(RedisCommand("ZRANGE", RedisKeys.nodeReaping(Self.dead), 0, -1), as: [String].self)
            _ = try await redis.send(RedisCommand("ZADD", [RedisKeys.nodeReaping(Self.dead), "XX"] + claimed.flatMap { [0, $0] as [any RedisArgument] }))
            let reaped = try await Self.reaper(redis).reap([Self.dead])
            #expect(reaped.rooms == 1 && reaped.users == 2 && reaped.members == 2 && reaped.sockets == 2 && reaped.dropped == [Self.dead], "\(reaped)")
            #expect(try await Self.members(redis, f.room).isEmpty)
            #expect(try await Self.sockets(redis, f.alice.id).isEmpty)
            #expect(try await Self.sockets(redis, f.bob.id).isEmpty)
            #expect(try await redis.send(RedisCommand("EXISTS", RedisKeys.nodeReaping(Self.dead)), as: Int.self) == 0)
        }
    }

    @Test("a batch whose function failed is released as lapsed: the next reaper takes it first")
    func failedBatchReleased() async throws {
        try await withTestRedis { redis, _ in
            let f = try await PresenceStoreTests.fixture(redis)
            try await Self.hold(Self.dead, Self.socket(Self.dead, "a"), of: f.alice.id, in: [f.room], redis)
            try await Self.kill(Self.dead, redis)
            // The room's presence key is damaged for a while: presence_reap fails there.
            let presence = RedisKeys.roomPresence(f.room)
            _ = try await redis.send(RedisCommand("RENAME", presence, presence + ":kept"))
            _ = try await redis.send(RedisCommand("SET", presence, "damaged"))
            await #expect(throws: RoomcastError.self) { try await Self.reaper(redis).reap([Self.dead]) }
            #expect(try await redis.send(RedisCommand("ZSCORE", RedisKeys.nodeReaping(Self.dead), "room:\(f.room)")).string == "0")
            #expect(try await redis.send(RedisCommand("ZSCORE", RedisKeys.nodeRegistry, Self.dead.rawValue)).string == "1")

            _ = try await redis.send(RedisCommand("RENAME", presence + ":kept", presence))
            let reaped = try await Self.reaper(redis).reap([Self.dead])
            #expect(reaped.rooms == 1 && reaped.members == 1 && reaped.dropped == [Self.dead], "\(reaped)")
        }
    }

    /// A node hash without an expiry is what a heartbeat of separate `HSET` and `PEXPIRE`
    /// commands leaves when the node dies between them (or a replica is promoted between them):
    /// it looked alive for ever, and the node's members stayed until their backstop.
    @Test("a node hash left without an expiry holds no lease: the node is reaped, and its own next heartbeat finds its lease lapsed")
    func hashWithoutExpiryHoldsNoLease() async throws {
        try await withTestRedis { redis, _ in
            let f = try await PresenceStoreTests.fixture(redis)
            let registry = NodeRegistry(redis: redis)
            try await registry.heartbeat(Self.info(Self.dead), ttl: .seconds(60))
            try await Self.hold(Self.dead, Self.socket(Self.dead, "a"), of: f.alice.id, in: [f.room], redis)
            // The torn heartbeat: the hash written, its expiry not; the registry entry expires.
            #expect(try await redis.send(RedisCommand("PERSIST", RedisKeys.node(Self.dead)), as: Int.self) == 1)
            _ = try await redis.send(RedisCommand("ZADD", RedisKeys.nodeRegistry, 1, Self.dead.rawValue))

            let reaped = try await Self.reaper(redis).reap([Self.dead])
            #expect(reaped.members == 1 && reaped.sockets == 1 && reaped.dropped == [Self.dead], "\(reaped)")
            #expect(try await Self.members(redis, f.room).isEmpty)
            // Had the node been alive, its next heartbeat tells it its members may have been taken.
            let beat = try await registry.heartbeat(Self.info(Self.dead), ttl: .seconds(60))
            #expect(beat.lapsed)
            #expect(try await redis.send(RedisCommand("PTTL", RedisKeys.node(Self.dead)), as: Int.self) > 0)
        }
    }
}
