import Foundation
import RedisClient
import RoomcastCore
import RoomcastTestSupport
import Testing

/// Presence lives as long as its node's lease: every member a node puts in Redis must be one a
/// reaper finds through the node's index if the node dies. A member whose index entry could not
/// be written must not stay: its node crashing would leave it to the hour-long backstop.
@Suite("Presence by lease: no member a reaper could not find", .serialized)
struct PresenceLeaseTests {
    /// Node 2's id, once it registered.
    static func node2(_ cluster: TwoNodeCluster) async throws -> NodeID {
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            let found = try await cluster.withRedis { redis in
                try await NodeRegistry(redis: redis).liveNodes().first { $0.address.hasSuffix(":\(cluster.node2.port)") }?.id
            }
            if let found { return found }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw TestFailure("node 2 never registered")
    }

    static func members(_ cluster: TwoNodeCluster, _ room: String) async throws -> [String] {
        try await cluster.withRedis { try await $0.send(RedisCommand("ZRANGE", "room:{\(room)}:presence", 0, -1), as: [String].self) }
    }

    @Test("a join whose node-index write fails is refused and leaves no member, so the node crashing right after leaves nothing to the backstop")
    func joinRefusedWithoutIndex() async throws {
        try await TwoNodeCluster.with(environment: ["ROOMCAST_NODE_TTL_MS": "4000"]) { cluster in
            let alice = try await cluster.register("alice")
            let bob = try await cluster.register("bob")
            let room = try await cluster.createRoom(by: alice, with: [bob])
            let aliceSocket = try await cluster.connect(alice, to: cluster.node1)
            _ = try await LiveRoomTests.join(aliceSocket, room)
            try await LiveRoomTests.expectPresence(aliceSocket, room, [alice])
            let node2 = try await Self.node2(cluster)
            let bobSocket = try await cluster.connect(bob, to: cluster.node2)

            // Node 2's index refuses writes (its rooms set is a string: SADD fails), as it would
            // with its slot's master unreachable while the room's answers.
            _ = try await cluster.withRedis { try await $0.send("SET", RedisKeys.nodeRooms(node2), "not a set") }
            let ack = try await bobSocket.emitWithAck("room:join", ["roomId": .string(room)])
            #expect(ack["error"]["code"] == "unavailable", "\(ack)")
            // Bob's member went again with the refused join.
            #expect(try await eventually { try await Self.members(cluster, room).allSatisfy { !$0.hasPrefix(bob.id + "|") } })

            // Node 2 dies. Once its lease lapsed, node 1 reaps what its index names and drops it.
            _ = try await cluster.withRedis { try await $0.send("DEL", RedisKeys.nodeRooms(node2)) }
            cluster.node2.process.signal(SIGKILL)
            #expect(try await eventually(within: .seconds(90)) {
                try await cluster.withRedis { redis in
                    try await redis.send(RedisCommand("ZSCORE", RedisKeys.nodeRegistry, node2.rawValue)).isNull
                }
            })
            // Nothing of Bob's is left to the backstop (an hour): the room holds Alice alone.
            let members = try await Self.members(cluster, room)
            #expect(members.count == 1 && members.allSatisfy { $0.hasPrefix(alice.id + "|") }, "\(members)")
            _ = bobSocket
        }
    }

    @Test("a CONNECT whose node-index write fails is refused and counts no socket; once the index takes writes, it connects and joins")
    func connectRefusedWithoutIndex() async throws {
        try await TwoNodeCluster.with { cluster in
            let alice = try await cluster.register("alice")
            let bob = try await cluster.register("bob")
            let room = try await cluster.createRoom(by: alice, with: [bob])
            let node2 = try await Self.node2(cluster)
            _ = try await cluster.withRedis { try await $0.send("SET", RedisKeys.nodeUsers(node2), "not a set") }
            do {
                let socket = try await cluster.connect(alice, to: cluster.node2)
                Issue.record("the CONNECT was accepted")
                try await socket.close()
            } catch SocketIOTestError.connectError(let message, let code) {
                #expect(code == "unavailable", "\(message)")
            }
            let aliceID = try #require(UserID(alice.id))
            #expect(try await eventually {
                try await cluster.withRedis { try await $0.send(RedisCommand("ZCARD", RedisKeys.userSockets(aliceID)), as: Int.self) } == 0
            })

            _ = try await cluster.withRedis { try await $0.send("DEL", RedisKeys.nodeUsers(node2)) }
            let socket = try await cluster.connect(alice, to: cluster.node2)
            _ = try await LiveRoomTests.join(socket, room)
            let index = try await cluster.withRedis { redis in try await NodeIndex(redis: redis, node: node2, lifetime: .seconds(1)).entries() }
            #expect(index.rooms.map(\.rawValue) == [room] && index.users == [aliceID])
            try await socket.close()
        }
    }
}
