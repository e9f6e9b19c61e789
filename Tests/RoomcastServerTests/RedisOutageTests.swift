import Foundation
import RedisClient
import Synchronization
import RoomcastTestSupport
import Testing

/// Redis goes away and comes back: sockets stay connected, mutations answer `unavailable` at once
/// instead of hanging or vanishing, `/readyz` says so, and everything resumes by itself.
@Suite("Redis outage on two nodes", .serialized)
struct RedisOutageTests {
    static func readyStatus(_ node: GatewayProcess) async throws -> Int {
        try await HTTPTestClient.request("GET", port: node.port, path: "/readyz").status
    }

    @Test("while Redis is down mutations fail with unavailable and /readyz is 503; after a restart all of it works again")
    func outage() async throws {
        // A presence lifetime shorter than the outage: the members expire while Redis is away
        // and the nodes must put them back.
        let environment = ["ROOMCAST_REDIS_COMMAND_TIMEOUT_MS": "1000", "ROOMCAST_PRESENCE_BACKSTOP_MS": "1500"]
        try await TwoNodeCluster.with(environment: environment, redisArguments: ["--appendonly", "yes", "--appendfsync", "always"]) { cluster in
            let alice = try await cluster.register("alice")
            let bob = try await cluster.register("bob")
            let room = try await cluster.createRoom(by: alice, with: [bob])
            let aliceSocket = try await cluster.connect(alice, to: cluster.node1)
            let bobSocket = try await cluster.connect(bob, to: cluster.node2)
            _ = try await ElementSocketTests.join(aliceSocket, room)
            _ = try await ElementSocketTests.join(bobSocket, room)
            let before = try await ElementSocketTests.create(aliceSocket, room)
            #expect(try await Self.readyStatus(cluster.node1) == 200)

            await cluster.redis.stop()
            // A clear answer, not a hang: the nodes' commands give up after 1 s, and a node that
            // waited for Redis to come back would never answer within the ack's patience.
            let refused = try await aliceSocket.emitWithAck(
                "element:create", ["roomId": .string(room), "element": ElementSocketTests.note()], timeout: .seconds(120)
            )
            #expect(refused["error"]["code"] == "unavailable", "\(refused)")
            let message = try await bobSocket.emitWithAck("message:send", ["roomId": .string(room), "text": "anyone?"], timeout: .seconds(30))
            #expect(message["error"]["code"] == "unavailable", "\(message)")
            let rest = try await ElementSocketTests.rest("GET", "/api/rooms/\(room)", as: alice, on: cluster.node2)
            #expect(rest.status == 503)
            #expect(rest.json["error"]["code"] == "unavailable")
            #expect(try await Self.readyStatus(cluster.node1) == 503)
            #expect(try await Self.readyStatus(cluster.node2) == 503)
            #expect(try await HTTPTestClient.request("GET", port: cluster.node1.port, path: "/healthz").status == 200)

            try await cluster.redis.start()
            #expect(try await eventually(within: .seconds(30)) {
                let first = try await Self.readyStatus(cluster.node1)
                let second = try await Self.readyStatus(cluster.node2)
                return first == 200 && second == 200
            })
            // The same sockets, never disconnected: subscriptions are back, the element made before
            // the outage is still there (AOF), and new events cross nodes again.
            let lastAck = Mutex<JSONValue>(.null)
            let after = try await eventually(within: .seconds(30)) {
                let ack = try await aliceSocket.emitWithAck("element:create", ["roomId": .string(room), "element": ElementSocketTests.note(x: 5)])
                lastAck.withLock { $0 = ack }
                return ack["data"]["element"]["id"].stringValue != nil
            }
            #expect(after, "\(lastAck.withLock { $0 })")
            let crossed = try await eventually(within: .seconds(30)) {
                await bobSocket.events(named: "element:created").count >= 2
            }
            guard crossed else {
                // Thrown, not just recorded, so the nodes' logs stay behind to read.
                throw TestFailure("bob got no element:created after Redis came back: \(await bobSocket.allEvents().map(\.name))")
            }
            let elements = try await ElementSocketTests.elements(cluster, room, as: bob)
            #expect(elements.contains { $0["id"] == before["id"] })
            // Both users are present again, though their members expired during the outage.
            #expect(try await eventually(within: .seconds(30)) {
                try await Self.presentUsers(cluster, room) == [alice.id, bob.id]
            })
        }
    }

    @Test("Redis SIGKILLed mid-traffic under appendfsync always: every acknowledged create survives, sockets stay, each event arrives once")
    func killedRedis() async throws {
        let environment = ["ROOMCAST_REDIS_COMMAND_TIMEOUT_MS": "1000", "ROOMCAST_PRESENCE_BACKSTOP_MS": "3000"]
        try await TwoNodeCluster.with(environment: environment, redisArguments: ["--appendonly", "yes", "--appendfsync", "always"]) { cluster in
            try await Self.killedRedisScenario(cluster)
        }
    }

    static func killedRedisScenario(_ cluster: TwoNodeCluster) async throws {
        let pair = try await RoomPair(cluster)
        let (alice, bob, room, aliceSocket, bobSocket) = (pair.alice, pair.bob, pair.room, pair.aliceSocket, pair.bobSocket)

        let (ackedIDs, refusals) = try await Self.createWhileRedisIsKilled(cluster, aliceSocket, room)

        // Redis restarted from its AOF with every acknowledged element.
        let stored = Set(try await ElementSocketTests.elements(cluster, room, as: bob, on: cluster.node2).compactMap { $0["id"].stringValue })
        #expect(Set(ackedIDs).isSubset(of: stored), "lost: \(Set(ackedIDs).subtracting(stored))")
        // Refusals while Redis was away were clear ones, never a silent drop.
        #expect(Set(refusals).isSubset(of: ["unavailable"]), "\(refusals)")
        // The same sockets, never disconnected, end with Redis's state, each event once: what the
        // pub/sub connections missed came through gap repair.
        let aliceClosed = await aliceSocket.isClosed
        let bobClosed = await bobSocket.isClosed
        #expect(!aliceClosed && !bobClosed)
        let converged = try await eventually(within: .seconds(30)) {
            let alices = try await GracefulDrainTests.created(aliceSocket)
            let bobs = try await GracefulDrainTests.created(bobSocket)
            return alices.ids == stored && bobs.ids == stored
        }
        guard converged else {
            let alices = try await GracefulDrainTests.created(aliceSocket).ids
            let bobs = try await GracefulDrainTests.created(bobSocket).ids
            throw TestFailure("alice missed \(stored.subtracting(alices)), bob missed \(stored.subtracting(bobs)) of \(stored.count)")
        }
        let aliceRepeats = try await GracefulDrainTests.created(aliceSocket).repeated
        let bobRepeats = try await GracefulDrainTests.created(bobSocket).repeated
        #expect(!aliceRepeats && !bobRepeats, "each event exactly once")
        // Presence is back: both sockets are members of the room's presence set, put back by the
        // nodes' next presence refresh if the outage outlasted their members' expiry (a refresh
        // that found no Redis failed at once, on a cluster, and waits for the next interval).
        #expect(try await eventually(within: .seconds(30)) { try await Self.presentUsers(cluster, room) == [alice.id, bob.id] })
        // With `appendfsync everysec` a crash can lose the last second, joins included: the nodes
        // put back the members of sockets they still hold.
        _ = try await cluster.withRedis { redis in try await redis.send("DEL", "room:{\(room)}:presence") }
        #expect(try await eventually(within: .seconds(30)) { try await Self.presentUsers(cluster, room) == [alice.id, bob.id] })
    }

    /// `socket` creates one element after another in `room` while Redis is SIGKILLed and started
    /// again, until 10 more were acknowledged after the restart.
    /// - Returns: the acknowledged element ids in order, and the error codes of the refused ones.
    static func createWhileRedisIsKilled(
        _ cluster: TwoNodeCluster, _ socket: SocketIOTestClient, _ room: String
    ) async throws -> (acked: [String], refusals: [String]) {
        let acked = Mutex<[String]>([])
        let refusals = Mutex<[String]>([])
        let stop = Atomic<Bool>(false)
        let traffic = Task {
            var index = 0
            while !stop.load(ordering: .relaxed), index < 1_000 {
                index += 1
                let ack = try? await socket.emitWithAck(
                    "element:create", ["roomId": .string(room), "element": ElementSocketTests.note(x: Double(index))], timeout: .seconds(10)
                )
                if let id = ack?["data"]["element"]["id"].stringValue {
                    acked.withLock { $0.append(id) }
                } else {
                    refusals.withLock { $0.append(ack?["error"]["code"].stringValue ?? "no ack") }
                    // A client backs off after a refusal. On a Redis Cluster a master that cannot
                    // be reached refuses at once, and a tight loop would spend the socket's event
                    // budget (`rate_limited`) instead of testing the outage.
                    try? await Task.sleep(for: .milliseconds(50))
                }
            }
        }
        #expect(try await eventually(within: .seconds(30)) { acked.withLock { $0.count } >= 10 })
        await cluster.redis.kill()
        try await Task.sleep(for: .milliseconds(500))
        try await cluster.redis.start()
        let beforeRestart = acked.withLock { $0.count }
        #expect(try await eventually(within: .seconds(30)) { acked.withLock { $0.count } >= beforeRestart + 10 })
        stop.store(true, ordering: .relaxed)
        await traffic.value
        return (acked.withLock { $0 }, refusals.withLock { $0 })
    }

    /// The users with an unexpired member in the room's presence set.
    static func presentUsers(_ cluster: TwoNodeCluster, _ room: String) async throws -> Set<String> {
        let members = try await cluster.withRedis { redis in
            try await redis.send(RedisCommand("ZRANGE", "room:{\(room)}:presence", Int(Date().timeIntervalSince1970 * 1000), "+inf", "BYSCORE"), as: [String].self)
        }
        return Set(members.compactMap { $0.split(separator: "|").first.map(String.init) })
    }
}
