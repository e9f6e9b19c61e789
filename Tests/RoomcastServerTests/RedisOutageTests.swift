import Foundation
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
        let environment = ["ROOMCAST_REDIS_COMMAND_TIMEOUT_MS": "1000"]
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
            let clock = ContinuousClock()
            let start = clock.now
            let refused = try await aliceSocket.emitWithAck(
                "element:create", ["roomId": .string(room), "element": ElementSocketTests.note()], timeout: .seconds(15)
            )
            #expect(refused["error"]["code"] == "unavailable", "\(refused)")
            #expect(clock.now - start < .seconds(10), "a clear answer, not a hang")
            let message = try await bobSocket.emitWithAck("message:send", ["roomId": .string(room), "text": "anyone?"], timeout: .seconds(15))
            #expect(message["error"]["code"] == "unavailable", "\(message)")
            let rest = try await ElementSocketTests.rest("GET", "/api/rooms/\(room)", as: alice, on: cluster.node2)
            #expect(rest.status == 503)
            #expect(rest.json["error"]["code"] == "unavailable")
            #expect(try await Self.readyStatus(cluster.node1) == 503)
            #expect(try await Self.readyStatus(cluster.node2) == 503)
            #expect(try await HTTPTestClient.request("GET", port: cluster.node1.port, path: "/healthz").status == 200)

            try await cluster.redis.start()
            #expect(try await eventually(within: .seconds(20)) {
                let first = try await Self.readyStatus(cluster.node1)
                let second = try await Self.readyStatus(cluster.node2)
                return first == 200 && second == 200
            })
            // The same sockets, never disconnected: subscriptions are back, the element made before
            // the outage is still there (AOF), and new events cross nodes again.
            let lastAck = Mutex<JSONValue>(.null)
            let after = try await eventually(within: .seconds(20)) {
                let ack = try await aliceSocket.emitWithAck("element:create", ["roomId": .string(room), "element": ElementSocketTests.note(x: 5)])
                lastAck.withLock { $0 = ack }
                return ack["data"]["element"]["id"].stringValue != nil
            }
            #expect(after, "\(lastAck.withLock { $0 })")
            let crossed = try await eventually(within: .seconds(20)) {
                await bobSocket.events(named: "element:created").count >= 2
            }
            guard crossed else {
                // Thrown, not just recorded, so the nodes' logs stay behind to read.
                throw TestFailure("bob got no element:created after Redis came back: \(await bobSocket.allEvents().map(\.name))")
            }
            let elements = try await ElementSocketTests.elements(cluster, room, as: bob)
            #expect(elements.contains { $0["id"] == before["id"] })
        }
    }
}
