import Foundation
import NIOCore
import RedisClient
import RoomcastTestSupport
import SocketIO
import Testing

@Suite("Socket.IO gateway: two nodes on one Redis", .serialized)
struct SocketGatewayTests {
    @Test("users on different nodes exchange message:new both ways, with acks")
    func crossNodeMessages() async throws {
        try await TwoNodeCluster.with { cluster in
            let alice = try await cluster.register("alice")
            let bob = try await cluster.register("bob")
            let room = try await cluster.createRoom(by: alice, with: [bob])
            let aliceSocket = try await cluster.connect(alice, to: cluster.node1)
            let bobSocket = try await cluster.connect(bob, to: cluster.node2)
            #expect(try await aliceSocket.emitWithAck("room:join", ["roomId": .string(room)]) == ["data": ["roomId": .string(room), "recovered": false]])
            #expect(try await bobSocket.emitWithAck("room:join", ["roomId": .string(room)])["data"]["roomId"].stringValue == room)

            let ack = try await aliceSocket.emitWithAck("message:send", ["roomId": .string(room), "text": "hi bob"])
            #expect(ack["data"]["message"]["text"] == "hi bob")
            #expect(ack["data"]["message"]["user"]["username"] == "alice")
            let atBob = try JSONValue(try await bobSocket.nextEvent("message:new"))
            #expect(atBob["roomId"].stringValue == room)
            #expect(atBob["message"] == ack["data"]["message"])
            let firstOffset = try #require(atBob["offset"].stringValue)
            // The sender's own sockets get the event too.
            #expect(try JSONValue(try await aliceSocket.nextEvent("message:new"))["offset"].stringValue == firstOffset)

            _ = try await bobSocket.emitWithAck("message:send", ["roomId": .string(room), "text": "hi alice"])
            let atAlice = try JSONValue(try await aliceSocket.nextEvent("message:new"))
            #expect(atAlice["message"]["text"] == "hi alice")
            #expect(atAlice["message"]["user"]["username"] == "bob")
            // Offsets are stream ids and increase.
            let secondOffset = try #require(atAlice["offset"].stringValue)
            #expect(secondOffset.split(separator: "-").map { Int($0)! }.lexicographicallyPrecedes(firstOffset.split(separator: "-").map { Int($0)! }) == false)
            #expect(secondOffset != firstOffset)
        }
    }

    @Test("a non-participant cannot join and receives nothing")
    func outsiderIsRefused() async throws {
        try await TwoNodeCluster.with { cluster in
            let alice = try await cluster.register("alice")
            let bob = try await cluster.register("bob")
            let eve = try await cluster.register("eve")
            let room = try await cluster.createRoom(by: alice, with: [bob])
            let aliceSocket = try await cluster.connect(alice, to: cluster.node1)
            let eveSocket = try await cluster.connect(eve, to: cluster.node2)
            _ = try await aliceSocket.emitWithAck("room:join", ["roomId": .string(room)])
            let refused = try await eveSocket.emitWithAck("room:join", ["roomId": .string(room)])
            #expect(refused["error"]["code"] == "forbidden")
            let sendRefused = try await eveSocket.emitWithAck("message:send", ["roomId": .string(room), "text": "let me in"])
            #expect(sendRefused["error"]["code"] == "forbidden")
            _ = try await aliceSocket.emitWithAck("message:send", ["roomId": .string(room), "text": "private"])
            try await eveSocket.expectNoEvent("message:new", within: .milliseconds(500))
            let missing = try await eveSocket.emitWithAck("room:join", ["roomId": "doesnotexist"])
            #expect(missing["error"]["code"] == "not_found")
            let invalid = try await eveSocket.emitWithAck("room:join", ["roomId": "{bad:id}"])
            #expect(invalid["error"]["code"] == "invalid_payload")
        }
    }

    @Test("a socket that leaves stops receiving, and the node unsubscribes when its last socket leaves")
    func leaveStopsDeliveryAndUnsubscribes() async throws {
        try await TwoNodeCluster.with { cluster in
            let alice = try await cluster.register("alice")
            let bob = try await cluster.register("bob")
            let room = try await cluster.createRoom(by: alice, with: [bob])
            let channel = "room:{\(room)}:events"
            let aliceSocket = try await cluster.connect(alice, to: cluster.node1)
            let bobSocket = try await cluster.connect(bob, to: cluster.node2)
            let bobSecond = try await cluster.connect(bob, to: cluster.node2)
            for socket in [aliceSocket, bobSocket, bobSecond] {
                _ = try await socket.emitWithAck("room:join", ["roomId": .string(room)])
            }
            // Two nodes hold sockets of the room: two subscriptions.
            #expect(try await cluster.withRedis { try await $0.send("PUBSUB", "SHARDNUMSUB", channel) } == .array([.bulk(ByteBuffer(string: channel)), .integer(2)]))

            _ = try await bobSocket.emitWithAck("room:leave", ["roomId": .string(room)])
            _ = try await aliceSocket.emitWithAck("message:send", ["roomId": .string(room), "text": "one"])
            #expect(try JSONValue(try await bobSecond.nextEvent("message:new"))["message"]["text"] == "one")
            try await bobSocket.expectNoEvent("message:new", within: .milliseconds(300))
            // node 2 still has a socket in the room.
            #expect(try await cluster.withRedis { try await $0.send("PUBSUB", "SHARDNUMSUB", channel) } == .array([.bulk(ByteBuffer(string: channel)), .integer(2)]))

            _ = try await bobSecond.emitWithAck("room:leave", ["roomId": .string(room)])
            let unsubscribed = try await eventually {
                try await cluster.withRedis { try await $0.send("PUBSUB", "SHARDNUMSUB", channel) } == .array([.bulk(ByteBuffer(string: channel)), .integer(1)])
            }
            #expect(unsubscribed)
            // Disconnecting the last socket of a node drops its subscriptions too.
            _ = try await aliceSocket.close()
            #expect(try await eventually { try await cluster.redis.shardChannels(matching: "room:*") == [] })
        }
    }

    @Test("a room's events follow joins and leaves between them: a node's recipients are regrouped when they change")
    func recipientsFollowJoinsAndLeaves() async throws {
        try await TwoNodeCluster.with { cluster in
            let alice = try await cluster.register("alice")
            let bob = try await cluster.register("bob")
            let room = try await cluster.createRoom(by: alice, with: [bob])
            let aliceSocket = try await cluster.connect(alice, to: cluster.node1)
            let first = try await cluster.connect(bob, to: cluster.node2)
            let second = try await cluster.connect(bob, to: cluster.node2)
            for socket in [aliceSocket, first, second] {
                _ = try await socket.emitWithAck("room:join", ["roomId": .string(room)])
            }
            func send(_ text: String) async throws {
                _ = try await aliceSocket.emitWithAck("message:send", ["roomId": .string(room), "text": .string(text)])
            }
            func nextText(_ socket: SocketIOTestClient) async throws -> String? {
                try JSONValue(try await socket.nextEvent("message:new"))["message"]["text"].stringValue
            }
            try await send("one")
            #expect(try await nextText(first) == "one")
            #expect(try await nextText(second) == "one")

            // A third socket joins after the room has had traffic: it gets the next event.
            let third = try await cluster.connect(bob, to: cluster.node2)
            _ = try await third.emitWithAck("room:join", ["roomId": .string(room)])
            try await send("two")
            for socket in [first, second, third] {
                #expect(try await nextText(socket) == "two")
            }

            // One leaves: the others still get the next event, and it does not. Back in the room,
            // its next event is the one after: a socket gets a room's events in order, so "three"
            // would have come first.
            _ = try await first.emitWithAck("room:leave", ["roomId": .string(room)])
            try await send("three")
            #expect(try await nextText(second) == "three")
            #expect(try await nextText(third) == "three")
            _ = try await first.emitWithAck("room:join", ["roomId": .string(room)])
            try await send("four")
            #expect(try await nextText(first) == "four")
        }
    }

    @Test("after its pub/sub connection is killed, a node resubscribes and delivery goes on")
    func deliverySurvivesPubSubReconnect() async throws {
        try await TwoNodeCluster.with { cluster in
            let alice = try await cluster.register("alice")
            let bob = try await cluster.register("bob")
            let room = try await cluster.createRoom(by: alice, with: [bob])
            let aliceSocket = try await cluster.connect(alice, to: cluster.node1)
            let bobSocket = try await cluster.connect(bob, to: cluster.node2)
            _ = try await aliceSocket.emitWithAck("room:join", ["roomId": .string(room)])
            _ = try await bobSocket.emitWithAck("room:join", ["roomId": .string(room)])
            let channel = "room:{\(room)}:events"
            _ = try await cluster.redis.onEveryServer { try await $0.send("CLIENT", "KILL", "TYPE", "pubsub") }
            // Both nodes come back subscribed to the room by themselves.
            #expect(try await eventually {
                try await cluster.withRedis { try await $0.send("PUBSUB", "SHARDNUMSUB", channel) } == .array([.bulk(ByteBuffer(string: channel)), .integer(2)])
            })
            _ = try await aliceSocket.emitWithAck("message:send", ["roomId": .string(room), "text": "after the drop"])
            #expect(try JSONValue(try await bobSocket.nextEvent("message:new"))["message"]["text"] == "after the drop")
        }
    }

    @Test("events published while a node's pub/sub connection is down reach its sockets through gap repair, in order, once")
    func gapRepair() async throws {
        try await TwoNodeCluster.with { cluster in try await Self.gapRepairScenario(cluster) }
    }

    static func gapRepairScenario(_ cluster: TwoNodeCluster) async throws {
        let pair = try await RoomPair(cluster)
        let (room, aliceSocket, bobSocket) = (pair.room, pair.aliceSocket, pair.bobSocket)
        let first = try await ElementSocketTests.create(aliceSocket, room)
        _ = try await bobSocket.nextEvent("element:created")

        // Redis refuses SSUBSCRIBE while it still runs scripts and SPUBLISH: the nodes' pub/sub
        // connections, killed, cannot come back, so every event below is published to nobody.
        _ = try await cluster.redis.onEveryServer { redis in
            _ = try await redis.send("ACL", "SETUSER", "default", "-ssubscribe")
            return try await redis.send("CLIENT", "KILL", "TYPE", "pubsub")
        }
        var created: [String] = []
        for index in 0..<5 {
            let element = try await ElementSocketTests.create(aliceSocket, room, ElementSocketTests.note(x: Double(index)))
            created.append(try #require(element["id"].stringValue))
        }
        let sent = try await aliceSocket.emitWithAck("message:send", ["roomId": .string(room), "text": "in the gap"])
        #expect(sent["data"]["message"]["text"] == "in the gap")
        let lost = try await cluster.withRedis { try await $0.send("PUBSUB", "SHARDNUMSUB", "room:{\(room)}:events") }
        #expect(lost == .array([.bulk(ByteBuffer(string: "room:{\(room)}:events")), .integer(0)]), "nobody was subscribed")
        try await bobSocket.expectNoEvent("message:new", within: .milliseconds(200))

        // Subscriptions come back; each node replays what its sockets missed from the room stream.
        _ = try await cluster.redis.onEveryServer { try await $0.send("ACL", "SETUSER", "default", "+ssubscribe") }
        for socket in [bobSocket, aliceSocket] {
            #expect(try await eventually(within: .seconds(30)) {
                await socket.events(named: "message:new").count == 1
            })
            let ids = try await socket.events(named: "element:created").compactMap { try JSONValue($0)["element"]["id"].stringValue }
            #expect(ids == [try #require(first["id"].stringValue)] + created, "in order, each once")
            let message = try JSONValue(try #require(await socket.events(named: "message:new").first))
            #expect(message["message"]["text"] == "in the gap")
        }
        // Live delivery goes on after the repair.
        _ = try await aliceSocket.emitWithAck("message:send", ["roomId": .string(room), "text": "live again"])
        #expect(try await eventually { await bobSocket.events(named: "message:new").count == 2 })
    }

    /// Drops both nodes' pub/sub links and keeps them down while Alice creates an element, then
    /// lets them back with reading the room stream refused: the gap cannot be read back yet.
    /// Returns the element's id and the offset Bob saw last.
    static func gapWithStreamReadsRefused(_ pair: RoomPair, _ cluster: TwoNodeCluster) async throws -> (element: String, lastSeen: String) {
        _ = try await ElementSocketTests.create(pair.aliceSocket, pair.room)
        let seen = try JSONValue(try await pair.bobSocket.nextEvent("element:created"))
        let lastSeen = try #require(seen["offset"].stringValue)
        _ = try await cluster.redis.onEveryServer { redis in
            _ = try await redis.send("ACL", "SETUSER", "default", "-ssubscribe")
            return try await redis.send("CLIENT", "KILL", "TYPE", "pubsub")
        }
        let missed = try await ElementSocketTests.create(pair.aliceSocket, pair.room, ElementSocketTests.note(x: 1))
        _ = try await cluster.redis.onEveryServer { try await $0.send("ACL", "SETUSER", "default", "+ssubscribe", "-xrange") }
        return (try #require(missed["id"].stringValue), lastSeen)
    }

    @Test("a gap Redis will not let a node read at first is read again until it can be: the sockets stay and get it in order")
    func gapReadRetried() async throws {
        try await TwoNodeCluster.with { cluster in
            let pair = try await RoomPair(cluster)
            let (missed, _) = try await Self.gapWithStreamReadsRefused(pair, cluster)
            // Subscribed again, reads refused: the room's events wait.
            #expect(try await eventually {
                try await cluster.withRedis { try await $0.send("PUBSUB", "SHARDNUMSUB", "room:{\(pair.room)}:events") }
                    == .array([.bulk(ByteBuffer(string: "room:{\(pair.room)}:events")), .integer(2)])
            })
            try await pair.bobSocket.expectNoEvent("element:created", within: .milliseconds(500))
            _ = try await cluster.redis.onEveryServer { try await $0.send("ACL", "SETUSER", "default", "+xrange") }
            for socket in [pair.bobSocket, pair.aliceSocket] {
                #expect(try await eventually { try await GracefulDrainTests.created(socket).ids.contains(missed) })
                #expect(try await GracefulDrainTests.created(socket).repeated == false)
                #expect(await socket.isClosed == false)
            }
        }
    }

    @Test("a gap a node cannot read back in pubsub.gap_read_timeout_ms closes the room's sockets; back with `since`, a client gets what it missed")
    func gapReadGivenUp() async throws {
        try await TwoNodeCluster.with(environment: ["ROOMCAST_PUBSUB_GAP_READ_TIMEOUT_MS": "500"]) { cluster in
            let pair = try await RoomPair(cluster)
            let (missed, lastSeen) = try await Self.gapWithStreamReadsRefused(pair, cluster)
            for socket in [pair.bobSocket, pair.aliceSocket] {
                #expect(try await eventually { await socket.isClosed }, "the socket was left open with a hole")
                #expect(try await GracefulDrainTests.created(socket).ids.contains(missed) == false)
            }
            // Each node counts the room's channel among the gaps it closed rather than filled.
            for node in [cluster.node1, cluster.node2] {
                #expect(try await MetricsEndpointTests.scrape(node).value("roomcast_gap_closes_total") ?? 0 >= 1)
            }
            _ = try await cluster.redis.onEveryServer { try await $0.send("ACL", "SETUSER", "default", "+xrange") }
            let again = try await cluster.connect(pair.bob, to: cluster.node2)
            let ack = try await RecoveryTests.join(again, pair.room, since: .string(lastSeen))
            #expect(ack == ["data": ["roomId": .string(pair.room), "recovered": true]])
            #expect(try await eventually { try await GracefulDrainTests.created(again).ids == [missed] })
        }
    }

    @Test("a gap the room's stream no longer holds whole (trimmed while the link was down) closes the room's sockets at once; back with `since`, a client gets a snapshot")
    func gapTrimmedAway() async throws {
        // Ten events kept, trimmed two at a time, so that the gap below is trimmed for sure.
        try await TwoNodeCluster.with(environment: ["ROOMCAST_ROOMS_STREAM_LENGTH": "10"]) { cluster in
            _ = try await cluster.redis.onEveryServer { try await $0.send("CONFIG", "SET", "stream-node-max-entries", "2") }
            let pair = try await RoomPair(cluster)
            _ = try await ElementSocketTests.create(pair.aliceSocket, pair.room)
            let lastSeen = try #require(try JSONValue(try await pair.bobSocket.nextEvent("element:created"))["offset"].stringValue)
            _ = try await cluster.redis.onEveryServer { redis in
                _ = try await redis.send("ACL", "SETUSER", "default", "-ssubscribe")
                return try await redis.send("CLIENT", "KILL", "TYPE", "pubsub")
            }
            for index in 0..<20 {
                _ = try await ElementSocketTests.create(pair.aliceSocket, pair.room, ElementSocketTests.note(x: Double(index)))
            }
            _ = try await cluster.redis.onEveryServer { try await $0.send("ACL", "SETUSER", "default", "+ssubscribe") }
            // Nothing is replayed with a hole in it: the sockets are told to resync (closed).
            for socket in [pair.bobSocket, pair.aliceSocket] {
                #expect(try await eventually { await socket.isClosed }, "the socket was left open with a hole")
            }
            #expect(try await GracefulDrainTests.created(pair.bobSocket).ids.count == 1, "no partial replay")
            let again = try await cluster.connect(pair.bob, to: cluster.node2)
            let ack = try await RecoveryTests.join(again, pair.room, since: .string(lastSeen))
            #expect(ack == ["data": ["roomId": .string(pair.room), "recovered": false]])
            let batch = try JSONValue(try await again.nextEvent("elements:batch"))
            #expect(batch["elements"].arrayValue?.count == 21)
        }
    }

    @Test("room:created reaches the other participants' sockets on any node, not the creator's")
    func roomCreatedEvent() async throws {
        try await TwoNodeCluster.with { cluster in
            let alice = try await cluster.register("alice")
            let bob = try await cluster.register("bob")
            let bobSocket = try await cluster.connect(bob, to: cluster.node2)
            let aliceSocket = try await cluster.connect(alice, to: cluster.node2)
            let room = try await cluster.createRoom(by: alice, with: [bob], on: cluster.node1)
            let event = try JSONValue(try await bobSocket.nextEvent("room:created"))
            #expect(event["room"]["id"].stringValue == room)
            #expect(event["room"]["participants"].arrayValue?.count == 2)
            try await aliceSocket.expectNoEvent("room:created", within: .milliseconds(300))
            // Fenced, so that a slow machine cannot hide a late one: a room Bob creates next with
            // Alice goes through the same user channel, after anything for the first room.
            let second = try await cluster.createRoom(by: bob, with: [alice], on: cluster.node1)
            #expect(try JSONValue(try await aliceSocket.nextEvent("room:created"))["room"]["id"].stringValue == second)
        }
    }

    @Test("bad payloads get clear errors and the connection stays usable")
    func badInput() async throws {
        try await TwoNodeCluster.with { cluster in
            let alice = try await cluster.register("alice")
            let bob = try await cluster.register("bob")
            let room = try await cluster.createRoom(by: alice, with: [bob])
            let socket = try await cluster.connect(alice, to: cluster.node1)
            for payload in [#""just a string""#, "[1,2]", "42", "null"] {
                let ack = try JSONValue(try await socket.emitWithAck("message:send", payload))
                #expect(ack["error"]["code"] == "invalid_payload", "payload \(payload)")
            }
            let wrongType = try await socket.emitWithAck("message:send", ["roomId": .string(room), "text": 5])
            #expect(wrongType["error"]["code"] == "invalid_payload")
            #expect(wrongType["error"]["message"].stringValue?.contains("text") == true)
            let missing = try await socket.emitWithAck("message:send", ["roomId": .string(room)])
            #expect(missing["error"]["message"].stringValue?.contains("text") == true)
            let tooLong = try await socket.emitWithAck("message:send", ["roomId": .string(room), "text": .string(String(repeating: "x", count: 16_001))])
            #expect(tooLong["error"]["code"] == "invalid_payload")
            let unknown = try await socket.emitWithAck("room:dance", ["roomId": .string(room)])
            #expect(unknown["error"]["code"] == "unknown_event")

            // Without an ack id, errors arrive as an `error` event naming the event.
            try await socket.emit("room:dance", #"{"x":1}"#)
            let error = try JSONValue(try await socket.nextEvent("error"))
            #expect(error["code"] == "unknown_event")
            #expect(error["event"] == "room:dance")
            _ = try await socket.emitWithAck("room:join", ["roomId": .string(room)])
            let ok = try await socket.emitWithAck("message:send", ["roomId": .string(room), "text": "still here"])
            #expect(ok["data"]["message"]["text"] == "still here")
        }
    }

    @Test("what cannot be decoded closes the connection (1002), as in the reference server")
    func undecodableInputCloses() async throws {
        try await TwoNodeCluster.with { cluster in
            let alice = try await cluster.register("alice")
            for send in [
                { (socket: SocketIOTestClient) in try await socket.sendRaw(text: #"42["message:send",{"roomId":"#) },
                { (socket: SocketIOTestClient) in try await socket.sendRaw(binary: ByteBuffer(bytes: [1, 2, 3])) },
            ] {
                let socket = try await cluster.connect(alice, to: cluster.node1)
                try await send(socket)
                #expect(try await socket.waitForClose() == 1002)
            }
        }
    }

    /// Alice and Bob in a room with sockets on node 1, Bob's joined: for tests that close
    /// Alice's connection and check that Bob's carries on.
    static func sameNodePair(_ cluster: TwoNodeCluster) async throws -> (room: String, alice: SocketIOTestClient, bob: SocketIOTestClient) {
        let alice = try await cluster.register("alice")
        let bob = try await cluster.register("bob")
        let room = try await cluster.createRoom(by: alice, with: [bob])
        let aliceSocket = try await cluster.connect(alice, to: cluster.node1)
        let bobSocket = try await cluster.connect(bob, to: cluster.node1)
        _ = try await bobSocket.emitWithAck("room:join", ["roomId": .string(room)])
        return (room, aliceSocket, bobSocket)
    }

    @Test("a 2 MB frame closes that connection only")
    func oversizedFrame() async throws {
        try await TwoNodeCluster.with { cluster in
            let (room, aliceSocket, bobSocket) = try await Self.sameNodePair(cluster)
            #expect(aliceSocket.handshake.maxPayload == 1_000_000)
            let huge = #"42["message:send",{"roomId":"\#(room)","text":""# + String(repeating: "a", count: 2_000_000) + #""}]"#
            try? await aliceSocket.sendRaw(text: huge)
            #expect(try await aliceSocket.waitForClose() == 1009)
            let ok = try await bobSocket.emitWithAck("message:send", ["roomId": .string(room), "text": "unaffected"])
            #expect(ok["data"]["message"]["text"] == "unaffected")
            #expect(try JSONValue(try await bobSocket.nextEvent("message:new"))["message"]["text"] == "unaffected")
        }
    }

    @Test("a text frame that is not UTF-8 closes that connection with 1007 (RFC 6455); others carry on")
    func invalidUTF8() async throws {
        try await TwoNodeCluster.with { cluster in
            let (room, aliceSocket, bobSocket) = try await Self.sameNodePair(cluster)
            var frame = ByteBuffer(string: #"42["message:send",{"roomId":"\#(room)","text":"a"#)
            frame.writeBytes([0xC3, 0x28])  // a lead byte followed by a non-continuation byte
            frame.writeString(#""}]"#)
            try? await aliceSocket.sendRaw(textBytes: frame)
            #expect(try await aliceSocket.waitForClose() == 1007)
            try await bobSocket.expectNoEvent("message:new", within: .milliseconds(200))
            let ok = try await bobSocket.emitWithAck("message:send", ["roomId": .string(room), "text": "unaffected"])
            #expect(ok["data"]["message"]["text"] == "unaffected")
            // Room events arrive in order: Bob's next message is his own, not a late one of Alice's.
            #expect(try JSONValue(try await bobSocket.nextEvent("message:new"))["message"]["text"] == "unaffected")
        }
    }
}
