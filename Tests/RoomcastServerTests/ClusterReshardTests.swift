import Foundation
import RedisClient
import RoomcastTestSupport
import Synchronization
import Testing

/// Two gateway nodes on a 3-master Redis Cluster while `redis-cli --cluster reshard` moves the
/// slots of live rooms (their keys and their sharded channels) from one master to another.
@Suite("Gateway on a Redis Cluster during a reshard")
struct ClusterReshardTests {
    /// Slots moved by the reshard: the lowest ones of the source master, as redis-cli picks them.
    static let movedSlots = 1_500

    @Test("slots of live rooms move during traffic: no acknowledged event is lost or repeated, and the channels follow their slots")
    func reshardDuringTraffic() async throws {
        try await TwoNodeCluster.with(mode: .cluster, environment: Self.unlimitedEvents) { cluster in try await Self.reshardScenario(cluster) }
    }

    /// The per-socket event budget lifted: the sender is paced only by ack round trips, so a fast
    /// machine would exceed the default 50 events a second (burst 100) and get `rate_limited`,
    /// which this test is not about (SocketLimitTests is).
    static let unlimitedEvents = ["ROOMCAST_SOCKET_EVENTS_PER_SECOND": "1000000", "ROOMCAST_SOCKET_EVENT_BURST": "1000000"]

    /// The Redis failures a node answered as `internal`, from its log: what an `internal`
    /// refusal was (seen once in a while on a loaded machine, cause not known yet).
    static func internalFailures(in node: GatewayProcess) -> [Substring] {
        let log = (try? String(contentsOfFile: node.logPath, encoding: .utf8)) ?? ""
        return log.split(separator: "\n").filter { $0.contains("answered as internal") }
    }

    static func reshardScenario(_ cluster: TwoNodeCluster) async throws {
        let redis = try #require(cluster.redis.cluster)
        let alice = try await cluster.register("alice")
        let bob = try await cluster.register("bob")
        let (source, moving) = try await Self.roomsInTheFirstSlots(cluster, redis, alice, bob)
        let target = try #require(redis.ports.first { $0 != source })
        // One room that stays where it is, as a control.
        var staying = try await cluster.createRoom(by: alice, with: [bob])
        while try await redis.port(servingKey: "room:{\(staying)}") == source {
            staying = try await cluster.createRoom(by: alice, with: [bob])
        }
        let rooms = moving + [staying]

        let aliceSocket = try await cluster.connect(alice, to: cluster.node1)
        let bobSocket = try await cluster.connect(bob, to: cluster.node2)
        for room in rooms {
            _ = try await ElementSocketTests.join(aliceSocket, room)
            _ = try await ElementSocketTests.join(bobSocket, room)
        }
        let channels = rooms.map { "room:{\($0)}:events" }.sorted()
        #expect(try await cluster.redis.shardChannels(matching: "room:*") == channels)

        // Alice creates elements round the rooms until told to stop, recording each ack.
        let acked = Mutex<[String: [String]]>([:])
        let refusals = Mutex<[String]>([])
        let ackCount = Atomic<Int>(0)
        let stop = Atomic<Bool>(false)
        let traffic = Task {
            var index = 0
            while !stop.load(ordering: .relaxed), index < 5_000 {
                index += 1
                let room = rooms[index % rooms.count]
                let ack = try? await aliceSocket.emitWithAck(
                    "element:create", ["roomId": .string(room), "element": ElementSocketTests.note(x: Double(index))]
                )
                if let id = ack?["data"]["element"]["id"].stringValue {
                    acked.withLock { $0[room, default: []].append(id) }
                    ackCount.add(1, ordering: .relaxed)
                } else {
                    refusals.withLock { $0.append(ack.map { "\($0["error"]["code"].stringValue ?? "?"): \($0["error"]["message"].stringValue ?? "")" } ?? "no ack") }
                }
            }
        }
        #expect(try await eventually { ackCount.load(ordering: .relaxed) >= 20 })
        let beforeReshard = ackCount.load(ordering: .relaxed)
        try await redis.reshard(fromPort: source, toPort: target, slots: Self.movedSlots)
        let afterReshard = ackCount.load(ordering: .relaxed)
        #expect(afterReshard > beforeReshard, "no event was acknowledged while the slots moved")
        #expect(try await eventually(within: .seconds(30)) { ackCount.load(ordering: .relaxed) >= afterReshard + 20 })
        stop.store(true, ordering: .relaxed)
        await traffic.value

        // The rooms' slots moved under the traffic.
        for room in moving {
            #expect(try await redis.port(servingKey: "room:{\(room)}") == target, "room \(room) did not move")
        }
        #expect(
            refusals.withLock { $0 }.isEmpty,
            "refused during the reshard: \(refusals.withLock { $0 }); node 1 logged: \(Self.internalFailures(in: cluster.node1))"
        )

        // Every acknowledged element is stored and reached Bob's socket on the other node
        // once, in the order of the acks (live, or by gap repair where a subscription moved).
        let ackedByRoom = acked.withLock { $0 }
        for room in rooms {
            let ids = ackedByRoom[room] ?? []
            #expect(!ids.isEmpty)
            let stored = Set(try await ElementSocketTests.elements(cluster, room, as: bob).compactMap { $0["id"].stringValue })
            #expect(Set(ids).isSubset(of: stored), "room \(room) lost \(Set(ids).subtracting(stored))")
            let delivered = try await eventually(within: .seconds(30)) {
                try await Self.createdIDs(bobSocket, in: room) == ids
            }
            let received = try await Self.createdIDs(bobSocket, in: room)
            let firstDifference = received.indices.first { $0 < ids.count && received[$0] != ids[$0] }
            let around = firstDifference.map { index in
                "; first out of order at \(index): got \(received[max(0, index - 2)..<min(received.count, index + 3)].map { ids.firstIndex(of: $0) ?? -1 }) (ack positions)"
            } ?? ""
            #expect(delivered, "room \(room): Bob got \(received.count) of \(ids.count), \(Set(received).count) distinct\(around)")
        }

        // Both nodes are subscribed to every room's channel on the master that owns it now,
        // and to nothing where it was.
        #expect(try await cluster.redis.shardChannels(matching: "room:*") == channels)
        for room in moving {
            #expect(try await redis.cli(port: source, ["PUBSUB", "SHARDNUMSUB", "room:{\(room)}:events"]).contains("\n0"))
            #expect(try await redis.cli(port: target, ["PUBSUB", "SHARDNUMSUB", "room:{\(room)}:events"]).contains("\n2"))
        }
        let sent = try await aliceSocket.emitWithAck("message:send", ["roomId": .string(moving[0]), "text": "after the move"])
        #expect(sent["data"]["message"]["text"] == "after the move")
        #expect(try JSONValue(try await bobSocket.nextEvent("message:new"))["message"]["text"] == "after the move")
    }

    /// Creates rooms of Alice and Bob until two of them sit on one master within the slots a
    /// reshard of ``movedSlots`` takes from it; returns that master's port and those rooms.
    static func roomsInTheFirstSlots(
        _ cluster: TwoNodeCluster, _ redis: RedisCluster, _ alice: TestUser, _ bob: TestUser
    ) async throws -> (source: Int, rooms: [String]) {
        var firstSlot: [Int: Int] = [:]
        for port in redis.ports {
            firstSlot[port] = try await redis.slots(ofPort: port).map(\.lowerBound).min()
        }
        var candidates: [Int: [String]] = [:]
        for _ in 0..<200 {
            let room = try await cluster.createRoom(by: alice, with: [bob])
            let slot = Int(HashSlot(key: Array("room:{\(room)}".utf8)).rawValue)
            let port = try await redis.port(servingKey: "room:{\(room)}")
            // The source's slots are one range after `redis-cli --cluster create`.
            guard let first = firstSlot[port], slot < first + movedSlots else { continue }
            candidates[port, default: []].append(room)
            if candidates[port]!.count == 2 { return (port, candidates[port]!) }
        }
        throw TestFailure("no two rooms on one master within its first \(movedSlots) slots after 200 rooms")
    }

    /// Ids of the elements in `socket`'s `element:created` events of `room`, in arrival order.
    static func createdIDs(_ socket: SocketIOTestClient, in room: String) async throws -> [String] {
        try await socket.events(named: "element:created").compactMap { text in
            let event = try JSONValue(text)
            return event["roomId"].stringValue == room ? event["element"]["id"].stringValue : nil
        }
    }
}
