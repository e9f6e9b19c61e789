import Foundation
import RedisClient
import RoomcastCore
import RoomcastTestSupport
import Testing

/// `room:join {roomId, since}`: a client that lost its connection gets the room events it missed,
/// in order, exactly once, from whichever node it reconnects to — or a fresh `elements:batch`
/// when they cannot all be replayed.
@Suite("Recovery by offset on rejoin", .serialized)
struct RecoveryTests {
    /// Room events a canvas client applies, in arrival order, with their payloads.
    static func roomEvents(_ socket: SocketIOTestClient) async throws -> [(name: String, payload: JSONValue)] {
        let names: Set<String> = Set(ElementSocketTests.elementEvents).union(["element:reaction:added", "message:new", "room:presence"])
        return try await socket.allEvents().filter { names.contains($0.name) }.map { ($0.name, try JSONValue($0.payload)) }
    }

    /// Ids of the room stream's entries after `offset`.
    static func streamIDs(_ cluster: TwoNodeCluster, _ room: String, after offset: String) async throws -> [String] {
        try await cluster.withRedis { redis in
            guard case .array(let entries) = try await redis.send("XRANGE", "room:{\(room)}:stream", "(" + offset, "+") else { return [] }
            return entries.compactMap { entry in
                guard case .array(let pair) = entry else { return nil }
                return pair.first?.string
            }
        }
    }

    static func join(_ socket: SocketIOTestClient, _ room: String, since: JSONValue) async throws -> JSONValue {
        try await socket.emitWithAck("room:join", ["roomId": .string(room), "since": since])
    }

    @Test("a client that reconnects to the other node with `since` gets exactly the events it missed, in order")
    func replayAcrossNodes() async throws {
        try await TwoNodeCluster.with { cluster in
            let alice = try await cluster.register("alice")
            let bob = try await cluster.register("bob")
            let room = try await cluster.createRoom(by: alice, with: [bob])
            let bobSocket = try await cluster.connect(bob, to: cluster.node2)
            _ = try await ElementSocketTests.join(bobSocket, room)

            let first = try await cluster.connect(alice, to: cluster.node1)
            let batch = try await ElementSocketTests.join(first, room)
            let before = try await ElementSocketTests.create(first, room)
            let beforeID = try #require(before["id"].stringValue)
            let seen = try JSONValue(try await first.nextEvent("element:created"))
            let lastSeen = try #require(seen["offset"].stringValue)
            #expect(try ElementSocketTests.offset(seen) > (try ElementSocketTests.offset(batch)))
            _ = try await first.close()

            // While Alice is away: elements, a move, a heart, a chat message.
            let created = try await ElementSocketTests.create(bobSocket, room)
            let createdID = try #require(created["id"].stringValue)
            _ = try await bobSocket.emitWithAck(
                "element:update", ["roomId": .string(room), "elementId": .string(beforeID), "updates": ["positionX": 99]]
            )
            _ = try await bobSocket.emitWithAck("element:reaction:toggle", ["roomId": .string(room), "elementId": .string(beforeID)])
            _ = try await bobSocket.emitWithAck("message:send", ["roomId": .string(room), "text": "while you were out"])
            let expected = try await Self.streamIDs(cluster, room, after: lastSeen)
            #expect(expected.count >= 4)

            let second = try await cluster.connect(alice, to: cluster.node2)
            let ack = try await Self.join(second, room, since: .string(lastSeen))
            #expect(ack == ["data": ["roomId": .string(room), "recovered": true]])
            // The missed events come in stream order, then the join's own presence change.
            #expect(try await eventually(within: .seconds(30)) { try await Self.roomEvents(second).filter { $0.payload["offset"].stringValue.map(expected.contains) == true }.count == expected.count })
            let replayed = try await Self.roomEvents(second)
            #expect(replayed.first?.name != "elements:batch")
            #expect(try await second.events(named: "elements:batch").isEmpty)
            let offsets = replayed.compactMap { $0.payload["offset"].stringValue }
            #expect(Array(offsets.prefix(expected.count)) == expected, "\(replayed.map(\.name))")
            #expect(Set(offsets).count == offsets.count, "no event twice: \(offsets)")
            let names = replayed.prefix(expected.count).map(\.name)
            #expect(names.contains("element:created") && names.contains("element:updated") && names.contains("message:new"))
            // The per-recipient frame: Alice did not heart it herself.
            let heart = try #require(replayed.first { $0.name == "element:reaction:added" }?.payload)
            #expect(heart["stats"]["hasReacted"] == false)
            #expect(replayed.contains { $0.name == "element:created" && $0.payload["element"]["id"].stringValue == createdID })

            // Live events follow the replay.
            let live = try await ElementSocketTests.create(bobSocket, room)
            #expect(try await eventually { try await Self.roomEvents(second).contains { $0.payload["element"]["id"] == live["id"] } })
        }
    }

    @Test("since equal to the room's last offset recovers with nothing to replay; 0-0 replays a room that kept everything")
    func upToDate() async throws {
        try await TwoNodeCluster.with { cluster in
            let alice = try await cluster.register("alice")
            let bob = try await cluster.register("bob")
            let room = try await cluster.createRoom(by: alice, with: [bob])
            let socket = try await cluster.connect(alice, to: cluster.node1)
            _ = try await ElementSocketTests.create(socket, room)
            let last = try await ElementSocketTests.lastOffset(cluster, room)
            #expect(try await Self.join(socket, room, since: .string(last)) == ["data": ["roomId": .string(room), "recovered": true]])
            try await socket.expectNoEvent("elements:batch", within: .milliseconds(300))
            // A room with no event yet: its snapshot offset is 0-0, which is current.
            let empty = try await cluster.createRoom(by: alice, with: [bob])
            #expect(try await Self.join(socket, empty, since: "0-0") == ["data": ["roomId": .string(empty), "recovered": true]])
            // 0-0 before the first event of a room that never dropped one: all of it is replayed.
            #expect(try await Self.join(socket, room, since: "0-0") == ["data": ["roomId": .string(room), "recovered": true]])
            #expect(try JSONValue(try await socket.nextEvent("element:created"))["offset"].stringValue != nil)
        }
    }

    @Test("malformed, unknown and future offsets get a fresh elements:batch, never an error")
    func badOffsets() async throws {
        try await TwoNodeCluster.with { cluster in
            let alice = try await cluster.register("alice")
            let bob = try await cluster.register("bob")
            let room = try await cluster.createRoom(by: alice, with: [bob])
            let socket = try await cluster.connect(alice, to: cluster.node2)
            _ = try await ElementSocketTests.create(socket, room)
            let bad: [JSONValue] = ["garbage", 42, ["nested": true], "", "99999999999999-0", "1-x", "-5", .null, "1-1-1"]
            for since in bad {
                let ack = try await Self.join(socket, room, since: since)
                #expect(ack == ["data": ["roomId": .string(room), "recovered": false]], "since \(since)")
                let batch = try JSONValue(try await socket.nextEvent("elements:batch"))
                #expect(batch["elements"].arrayValue?.count == 1, "since \(since)")
            }
        }
    }

    @Test("an offset older than the events the room keeps gets a snapshot with every element")
    func trimmed() async throws {
        try await TwoNodeCluster.with(environment: ["ROOMCAST_ROOMS_STREAM_LENGTH": "10", "ROOMCAST_SOCKET_EVENTS_PER_SECOND": "100000"]) { cluster in
            let alice = try await cluster.register("alice")
            let bob = try await cluster.register("bob")
            let room = try await cluster.createRoom(by: alice, with: [bob])
            let socket = try await cluster.connect(alice, to: cluster.node1)
            _ = try await ElementSocketTests.join(socket, room)
            let first = try await ElementSocketTests.create(socket, room)
            let since = try JSONValue(try await socket.nextEvent("element:created"))["offset"]
            // `MAXLEN ~` trims whole stream nodes (100 entries): go well past one.
            for index in 0..<250 {
                _ = try await socket.emitWithAck(
                    "element:update", ["roomId": .string(room), "elementId": first["id"], "updates": ["positionX": .number(Double(index))]]
                )
            }
            let kept = try await cluster.withRedis { redis in try Int(redisReply: try await redis.send("XLEN", "room:{\(room)}:stream")) }
            #expect(kept < 250)
            let other = try await cluster.connect(alice, to: cluster.node2)
            #expect(try await Self.join(other, room, since: since) == ["data": ["roomId": .string(room), "recovered": false]])
            let batch = try JSONValue(try await other.nextEvent("elements:batch"))
            #expect(batch["elements"][0]["positionX"] == 249)
        }
    }
}
