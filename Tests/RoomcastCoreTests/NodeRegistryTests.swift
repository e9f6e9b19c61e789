import Foundation
import RedisClient
import RoomcastCore
import RoomcastTestSupport
import Testing

@Suite("NodeID")
struct NodeIDTests {
    @Test("random ids are 8 lowercase base36 characters and parse back")
    func random() throws {
        var seen = Set<NodeID>()
        for _ in 0..<200 {
            let id = NodeID.random()
            #expect(id.rawValue.utf8.count == 8)
            #expect(id.rawValue.allSatisfy { ("a"..."z").contains($0) || ("0"..."9").contains($0) }, "\(id)")
            #expect(NodeID(id.rawValue) == id)
            seen.insert(id)
        }
        #expect(seen.count == 200)
    }

    @Test("anything but exactly 8 of a-z and 0-9 is refused", arguments: ["", "abc", "abcdefg", "abcdefghi", "ABCDEFGH", "abcd-fgh", "abcd{fg}", "abcdéfg", "abcd efg"])
    func refuses(_ text: String) throws {
        #expect(NodeID(text) == nil)
        #expect(throws: DecodingError.self) { try JSONDecoder().decode([NodeID].self, from: JSONEncoder().encode([text])) }
    }

    @Test("the registry keys carry a hash tag")
    func keys() throws {
        let id = try #require(NodeID("ab12cd34"))
        #expect(RedisKeys.node(id) == "node:{ab12cd34}")
        #expect(RedisKeys.nodeRegistry == "nodes:{registry}")
    }
}

/// NodeRegistry on a real Redis: heartbeats, reads, expiry and removal.
@Suite("NodeRegistry against a real redis-server")
struct NodeRegistryTests {
    static let first = NodeID("node0001")!
    static let second = NodeID("node0002")!

    static func info(_ id: NodeID, port: Int, sockets: Int = 0, startedAt: Int64 = 1_700_000_000_000) -> NodeInfo {
        NodeInfo(id: id, address: "http://127.0.0.1:\(port)", startedAt: Timestamp(milliseconds: startedAt), sockets: sockets)
    }

    @Test("a heartbeat writes the node's hash with a TTL and its registry entry scored by expiry")
    func heartbeat() async throws {
        try await withTestRedis { redis, _ in
            let registry = NodeRegistry(redis: redis)
            let before = Timestamp.now()
            // A TTL long against what a loaded machine adds between the write and the reads below.
            let beat = try await registry.heartbeat(Self.info(Self.first, port: 8081, sockets: 3), ttl: .seconds(60))
            let written = beat.entry
            // A first beat finds no hash: to the registry it is a node whose lease lapsed (the
            // node itself ignores that on its first beat).
            #expect(beat.lapsed)
            #expect(beat.expired.isEmpty)
            #expect(written.updatedAt >= before)
            #expect(written.expiresAt.milliseconds == written.updatedAt.milliseconds + 60_000)

            let fields = try await redis.send(RedisCommand("HGETALL", RedisKeys.node(Self.first))).fields
            #expect(
                fields == [
                    "id": "node0001", "address": "http://127.0.0.1:8081", "startedAt": "1700000000000", "sockets": "3",
                    "updatedAt": String(written.updatedAt.milliseconds),
                ]
            )
            let ttl = try await redis.send(RedisCommand("PTTL", RedisKeys.node(Self.first)), as: Int.self)
            #expect((30_000...60_000).contains(ttl), "\(ttl)")
            let score = try await redis.send(RedisCommand("ZSCORE", RedisKeys.nodeRegistry, "node0001"), as: String.self)
            #expect(Int64(score) == written.expiresAt.milliseconds)

            let read = try #require(try await registry.node(Self.first))
            #expect(read.id == Self.first)
            #expect(read.address == "http://127.0.0.1:8081")
            #expect(read.sockets == 3)
            #expect(read.startedAt == Timestamp(milliseconds: 1_700_000_000_000))
            #expect(read.updatedAt == written.updatedAt)
            // Read back from PTTL and the reader's clock: a loaded machine adds seconds between the two.
            #expect(abs(read.expiresAt.milliseconds - written.expiresAt.milliseconds) < 30_000)
            #expect(try await registry.node(Self.second) == nil)
        }
    }

    @Test("another heartbeat updates the socket count and extends the entry")
    func refresh() async throws {
        try await withTestRedis { redis, _ in
            let registry = NodeRegistry(redis: redis)
            let first = try await registry.heartbeat(Self.info(Self.first, port: 8081, sockets: 1), ttl: .seconds(5))
            try await Task.sleep(for: .milliseconds(20))
            let second = try await registry.heartbeat(Self.info(Self.first, port: 8081, sockets: 7), ttl: .seconds(5))
            #expect(second.entry.expiresAt > first.entry.expiresAt)
            // The hash was there: the lease held.
            #expect(!second.lapsed)
            let nodes = try await registry.liveNodes()
            #expect(nodes.map(\.id) == [Self.first])
            #expect(nodes.first?.sockets == 7)
            #expect(try await redis.send(RedisCommand("ZCARD", RedisKeys.nodeRegistry), as: Int.self) == 1)
        }
    }

    @Test("live nodes come oldest first; removal takes a node out of both keys, and its index with it")
    func liveAndRemove() async throws {
        try await withTestRedis { redis, _ in
            let registry = NodeRegistry(redis: redis)
            try await registry.heartbeat(Self.info(Self.second, port: 8082, startedAt: 2_000), ttl: .seconds(60))
            try await registry.heartbeat(Self.info(Self.first, port: 8081, startedAt: 1_000), ttl: .seconds(60))
            #expect(try await registry.liveNodes().map(\.id) == [Self.first, Self.second])
            #expect(try await registry.liveNodes().map(\.address) == ["http://127.0.0.1:8081", "http://127.0.0.1:8082"])

            try await NodeIndex(redis: redis, node: Self.first, lifetime: .seconds(60)).add(rooms: [RoomID("r1")!], users: [UserID("u1")!])
            try await registry.remove(Self.first)
            #expect(try await redis.send(RedisCommand("EXISTS", RedisKeys.nodeRooms(Self.first), RedisKeys.nodeUsers(Self.first)), as: Int.self) == 0)
            #expect(try await registry.liveNodes().map(\.id) == [Self.second])
            #expect(try await registry.node(Self.first) == nil)
            #expect(try await redis.send(RedisCommand("EXISTS", RedisKeys.node(Self.first)), as: Int.self) == 0)
            #expect(try await redis.send(RedisCommand("ZSCORE", RedisKeys.nodeRegistry, "node0001")).isNull)
            // Removing again is harmless.
            try await registry.remove(Self.first)
            // A node leaving with members still in Redis stays, expired, with its index, for a reaper.
            try await NodeIndex(redis: redis, node: Self.second, lifetime: .seconds(60)).add(rooms: [RoomID("r1")!])
            try await registry.remove(Self.second, holdingNothing: false)
            #expect(try await registry.liveNodes().isEmpty)
            #expect(try await redis.send(RedisCommand("ZSCORE", RedisKeys.nodeRegistry, "node0002")).string == "0")
            #expect(try await redis.send(RedisCommand("SMEMBERS", RedisKeys.nodeRooms(Self.second)), as: [String].self) == ["r1"])
            #expect(try await redis.send(RedisCommand("EXISTS", RedisKeys.node(Self.second)), as: Int.self) == 0)
        }
    }

    @Test("a node that stops its heartbeat drops out after its TTL; its id stays in the registry, expired, until a reaper took it out")
    func expiry() async throws {
        try await withTestRedis { redis, _ in
            // Connected before the clock matters: expiries are computed when a call starts.
            _ = try await redis.send("PING")
            let registry = NodeRegistry(redis: redis)
            // The long-lived node first: only one call runs between the short heartbeat and the
            // check that it counts, with a 3 s margin for a loaded machine.
            let ttl = Duration.seconds(3)
            try await registry.heartbeat(Self.info(Self.second, port: 8082), ttl: .seconds(60))
            let clock = ContinuousClock()
            let beat = clock.now
            try await registry.heartbeat(Self.info(Self.first, port: 8081), ttl: ttl)
            #expect(try await registry.liveNodes().count == 2)
            // Gone once its TTL passed, not before (polled, so a slow machine only waits longer).
            #expect(try await eventually(within: .seconds(30)) { try await registry.node(Self.first) == nil })
            #expect(clock.now - beat >= ttl - .milliseconds(100), "gone after \(clock.now - beat)")
            #expect(try await registry.liveNodes().map(\.id) == [Self.second])
            // Listed as expired by the live node's next beat, and taken out by its reaper (it
            // left nothing to reap).
            let next = try await registry.heartbeat(Self.info(Self.second, port: 8082), ttl: .seconds(60))
            #expect(next.expired == [Self.first])
            let reaped = try await NodeReaper(redis: redis, presence: PresenceStore(redis: redis), sockets: UserSocketStore(redis: redis)).reap(next.expired)
            #expect(reaped.dropped == [Self.first])
            let members = try await redis.send(RedisCommand("ZRANGE", RedisKeys.nodeRegistry, 0, -1), as: [String].self)
            #expect(members == ["node0002"])
        }
    }

    @Test("an entry in the registry whose hash is gone is left out")
    func danglingMember() async throws {
        try await withTestRedis { redis, _ in
            let registry = NodeRegistry(redis: redis)
            try await registry.heartbeat(Self.info(Self.first, port: 8081), ttl: .seconds(60))
            try await registry.heartbeat(Self.info(Self.second, port: 8082), ttl: .seconds(60))
            _ = try await redis.send(RedisCommand("DEL", RedisKeys.node(Self.second)))
            #expect(try await registry.liveNodes().map(\.id) == [Self.first])
        }
    }

    @Test("roomcast inspect nodes lists the expired nodes still to be reaped, with what is left of their index, until they are")
    func inspectListsExpiredNodes() async throws {
        try await withTestRedis { redis, _ in
            let f = try await PresenceStoreTests.fixture(redis)
            let registry = NodeRegistry(redis: redis)
            try await registry.heartbeat(Self.info(NodeReaperTests.live, port: 8191), ttl: .seconds(60))
            try await registry.heartbeat(Self.info(NodeReaperTests.dead, port: 8192), ttl: .seconds(60))
            try await NodeReaperTests.hold(NodeReaperTests.dead, NodeReaperTests.socket(NodeReaperTests.dead, "a"), of: f.alice.id, in: [f.room], redis)
            try await NodeReaperTests.kill(NodeReaperTests.dead, redis)

            let inspection = try await Inspector(redis: redis).nodes()
            #expect(inspection.nodes.map(\.id) == [NodeReaperTests.live])
            let text = inspection.text
            #expect(text.contains("expired, to be reaped (1)"), "\(text)")
            let line = try #require(text.split(separator: "\n").first { $0.contains(NodeReaperTests.dead.rawValue) }, "\(text)")
            // Expired at epoch ms 1; one room and one user left in its index, nothing claimed.
            #expect(line.split(separator: " ").map(String.init) == [NodeReaperTests.dead.rawValue, Timestamp(milliseconds: 1).description, "1", "1", "0"], "\(line)")
            let json = String(decoding: try JSONEncoder().encode(inspection), as: UTF8.self)
            #expect(json.contains(#""id":"deadnode""#), "\(json)")

            _ = try await NodeReaperTests.reaper(redis).reap([NodeReaperTests.dead])
            let after = try await Inspector(redis: redis).nodes()
            #expect(!after.text.contains(NodeReaperTests.dead.rawValue), "\(after.text)")
        }
    }
}
