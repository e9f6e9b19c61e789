import Foundation
import RedisClient
import RoomcastTestSupport
import Testing

/// Redis SIGKILLed mid-traffic and started again under two nodes: room, per-user and
/// notification events reach every socket again, on both nodes, without the sockets
/// reconnecting; per-user events published while a node's pub/sub link was down are read back
/// from the user's stream, each once.
@Suite("Per-user events after a Redis crash", .serialized)
struct RedisKillUserEventsTests {
    @Test("Redis SIGKILLed mid-traffic: element:created:global for every acknowledged create, and notifications, reach both users' sockets on both nodes once")
    func userEventsAfterKill() async throws {
        let environment = ["ROOMCAST_REDIS_COMMAND_TIMEOUT_MS": "1000", "ROOMCAST_PRESENCE_BACKSTOP_MS": "3000"]
        try await TwoNodeCluster.with(environment: environment, redisArguments: ["--appendonly", "yes", "--appendfsync", "always"]) { cluster in
            try await Self.scenario(cluster)
        }
    }

    static func scenario(_ cluster: TwoNodeCluster) async throws {
        let alice = try await cluster.register("alice")
        let bob = try await cluster.register("bob")
        let room = try await cluster.createRoom(by: alice, with: [bob])
        // Each user on both nodes: the creator's own node and the other one.
        let alice1 = try await cluster.connect(alice, to: cluster.node1)
        let alice2 = try await cluster.connect(alice, to: cluster.node2)
        let bob1 = try await cluster.connect(bob, to: cluster.node1)
        let bob2 = try await cluster.connect(bob, to: cluster.node2)
        let sockets = [("alice@1", alice1), ("alice@2", alice2), ("bob@1", bob1), ("bob@2", bob2)]
        _ = try await ElementSocketTests.join(alice1, room)
        _ = try await ElementSocketTests.join(bob2, room)

        // Alice creates one element after another while Redis is killed and started again.
        let acked = try await RedisOutageTests.createWhileRedisIsKilled(cluster, alice1, room).acked
        let ackedIDs = Set(acked)

        // Room events: both joined sockets end with every acknowledged element.
        for (name, socket) in [("alice@1", alice1), ("bob@2", bob2)] {
            let complete = try await eventually(within: .seconds(20)) {
                ackedIDs.isSubset(of: try await GracefulDrainTests.created(socket).ids)
            }
            guard complete else {
                throw TestFailure("\(name) missed element:created for \(ackedIDs.subtracting(try await GracefulDrainTests.created(socket).ids))")
            }
        }
        // Per-user events: every socket of both users, on both nodes, each acknowledged create once.
        for (name, socket) in sockets {
            let complete = try await eventually(within: .seconds(20)) {
                ackedIDs.isSubset(of: try await Self.globalCreated(socket).ids)
            }
            guard complete else {
                let missed = ackedIDs.subtracting(try await Self.globalCreated(socket).ids)
                throw TestFailure("\(name) missed element:created:global for \(missed.count) of \(ackedIDs.count) acknowledged creates")
            }
            #expect(try await !Self.globalCreated(socket).repeated, "\(name): each element:created:global once")
        }
        for (_, socket) in sockets { #expect(await !socket.isClosed, "sockets stay connected") }

        // Notifications after the restart: Bob's heart on Alice's element reaches both of her
        // sockets, and her read-all's badge reaches both again.
        let element = try #require(acked.last)
        let toggled = try await bob1.emitWithAck("element:reaction:toggle", ["roomId": .string(room), "elementId": .string(element)])
        #expect(toggled["data"]["action"] == "added", "\(toggled)")
        for (name, socket) in [("alice@1", alice1), ("alice@2", alice2)] {
            let notified = try await eventually(within: .seconds(20)) {
                await socket.events(named: "notification:new").contains { $0.contains(element) }
            }
            guard notified else { throw TestFailure("\(name) got no notification:new after Redis came back") }
        }
        let read = try await ElementSocketTests.rest("POST", "/api/notifications/read-all", as: alice, on: cluster.node2)
        #expect(read.status == 200, "\(read.json)")
        for (name, socket) in [("alice@1", alice1), ("alice@2", alice2)] {
            let badge = try await eventually(within: .seconds(20)) {
                try await socket.events(named: "badge:updated").last.map { try JSONValue($0)["unreadCount"] == 0 } ?? false
            }
            #expect(badge, "\(name): badge:updated {unreadCount: 0}")
        }
    }

    /// The element ids of the `element:created:global` events a socket got, and whether any came twice.
    static func globalCreated(_ socket: SocketIOTestClient) async throws -> (ids: Set<String>, repeated: Bool) {
        let ids = try await socket.events(named: "element:created:global").compactMap { try JSONValue($0)["elementId"].stringValue }
        return (Set(ids), Set(ids).count != ids.count)
    }
}
