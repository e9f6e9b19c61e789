import Foundation
@testable import RoomcastServer
import RoomcastTestSupport
import SocketIO
import Testing

@Suite("TokenBucket")
struct TokenBucketTests {
    @Test("a full bucket allows a burst, then the rate, never more than the burst after idling")
    func bucket() {
        let start = ContinuousClock.now
        var bucket = TokenBucket(rate: 2, burst: 3, now: start)
        // What each take answers, at its time after start.
        var answers: [Bool] = []
        for offset in [0, 0, 0, 0, 400, 500, 600] {
            answers.append(bucket.take(now: start + .milliseconds(offset)))
        }
        #expect(answers == [true, true, true, false, false, true, false])
        // A long idle refills to the burst, not beyond.
        let later = start + .seconds(60)
        answers = (0..<4).map { _ in bucket.take(now: later) }
        #expect(answers == [true, true, true, false])
        // A clock read out of order does not mint tokens.
        let early = bucket.take(now: start)
        #expect(!early)
    }
}

/// Per-socket limits over real sockets: the error, and that the socket and everyone else carry on.
@Suite("Socket limits on two nodes", .serialized)
struct SocketLimitTests {
    @Test("over socket.events_per_second: rate_limited acks and error events, the socket carries on, others are unaffected")
    func rateLimit() async throws {
        let environment = ["ROOMCAST_SOCKET_EVENTS_PER_SECOND": "1", "ROOMCAST_SOCKET_EVENT_BURST": "3"]
        try await TwoNodeCluster.with(environment: environment) { cluster in
            let alice = try await cluster.register("alice")
            let bob = try await cluster.register("bob")
            let room = try await cluster.createRoom(by: alice, with: [bob])
            let socket = try await cluster.connect(alice, to: cluster.node1)
            // Far more than the burst, one after another: a loaded machine that takes most of a
            // second a round trip still sends many more than the bucket refills meanwhile.
            var codes: [String] = []
            let clock = ContinuousClock()
            let start = clock.now
            for _ in 0..<30 {
                let ack = try await socket.emitWithAck("room:leave", ["roomId": .string(room)])
                codes.append(ack["error"]["code"].stringValue ?? "ok")
            }
            let elapsed = clock.now - start
            #expect(codes.prefix(3).allSatisfy { $0 == "ok" }, "\(codes)")
            // Three come from the burst, the others from the refill (1 a second) while these ran.
            let refilled = Int((Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18).rounded(.up))
            #expect(codes.filter { $0 == "ok" }.count <= 3 + refilled, "\(codes) in \(elapsed)")
            #expect(codes.filter { $0 == "rate_limited" }.count >= 3, "\(codes) in \(elapsed)")
            #expect(Set(codes).isSubset(of: ["ok", "rate_limited"]), "\(codes)")
            // Without an ack id the refusal is an `error` event naming the event. More events than
            // the burst, back to back: however slow the machine was so far, some are over the budget.
            for _ in 0..<6 {
                try await socket.emit("room:leave", ["roomId": .string(room)])
            }
            let error = try JSONValue(try await socket.nextEvent("error"))
            #expect(error["code"] == "rate_limited")
            #expect(error["event"] == "room:leave")
            // Bob, on the same node, has his own budget.
            let bobSocket = try await cluster.connect(bob, to: cluster.node1)
            for _ in 0..<3 {
                #expect(try await bobSocket.emitWithAck("room:leave", ["roomId": .string(room)])["data"]["roomId"].stringValue == room)
            }
            // Alice's budget refills: after a pause she is served again on the same connection.
            #expect(try await eventually(within: .seconds(30)) {
                try await socket.emitWithAck("room:leave", ["roomId": .string(room)])["data"]["roomId"].stringValue == room
            })
        }
    }

    @Test("over socket.max_rooms a join is limit_exceeded until the socket leaves a room")
    func roomLimit() async throws {
        try await TwoNodeCluster.with(environment: ["ROOMCAST_SOCKET_MAX_ROOMS": "2"]) { cluster in
            let alice = try await cluster.register("alice")
            let bob = try await cluster.register("bob")
            let rooms = [
                try await cluster.createRoom(by: alice, with: [bob]), try await cluster.createRoom(by: alice, with: [bob]),
                try await cluster.createRoom(by: alice, with: [bob]),
            ]
            let socket = try await cluster.connect(alice, to: cluster.node2)
            _ = try await ElementSocketTests.join(socket, rooms[0])
            _ = try await ElementSocketTests.join(socket, rooms[1])
            let refused = try await socket.emitWithAck("room:join", ["roomId": .string(rooms[2])])
            #expect(refused["error"]["code"] == "limit_exceeded")
            // Joining a room it is already in is not a new room.
            #expect(try await socket.emitWithAck("room:join", ["roomId": .string(rooms[1])])["data"]["roomId"].stringValue == rooms[1])
            _ = try await socket.emitWithAck("room:leave", ["roomId": .string(rooms[0])])
            #expect(try await socket.emitWithAck("room:join", ["roomId": .string(rooms[2])])["data"]["roomId"].stringValue == rooms[2])
            // Another socket of the same user has its own rooms.
            let other = try await cluster.connect(alice, to: cluster.node1)
            _ = try await ElementSocketTests.join(other, rooms[0])
        }
    }

    @Test("joins of several rooms sent at once stay within socket.max_rooms: the others are limit_exceeded")
    func concurrentJoinsWithinRoomLimit() async throws {
        try await TwoNodeCluster.with(environment: ["ROOMCAST_SOCKET_MAX_ROOMS": "2"]) { cluster in
            let alice = try await cluster.register("alice")
            let bob = try await cluster.register("bob")
            var rooms: [String] = []
            for _ in 0..<5 {
                rooms.append(try await cluster.createRoom(by: alice, with: [bob]))
            }
            let socket = try await cluster.connect(alice, to: cluster.node1)
            // A socket's events of different rooms run side by side: all five joins are in flight.
            let answers = try await withThrowingTaskGroup(of: JSONValue.self) { group in
                for room in rooms {
                    group.addTask { try await socket.emitWithAck("room:join", ["roomId": .string(room)]) }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            let joined = answers.filter { $0["data"]["roomId"].stringValue != nil }
            let refused = answers.filter { $0["error"]["code"] == "limit_exceeded" }
            #expect(joined.count == 2, "\(answers)")
            #expect(refused.count == 3, "\(answers)")
        }
    }

    @Test("over socket.max_per_user a CONNECT is limit_exceeded on any node; a closed or dead node's socket frees its place")
    func socketsPerUser() async throws {
        // A short node TTL, so that a killed node's sockets are reaped quickly (their own backstop
        // expiry is an hour).
        let environment = ["ROOMCAST_SOCKET_MAX_PER_USER": "2", "ROOMCAST_NODE_TTL_MS": "3000"]
        try await TwoNodeCluster.with(environment: environment) { cluster in try await Self.socketsPerUserScenario(cluster) }
    }

    static func socketsPerUserScenario(_ cluster: TwoNodeCluster) async throws {
        let alice = try await cluster.register("alice")
        let bob = try await cluster.register("bob")
        let room = try await cluster.createRoom(by: alice, with: [bob])
        let first = try await cluster.connect(alice, to: cluster.node1)
        let second = try await cluster.connect(alice, to: cluster.node2)
        // The count spans nodes: a third socket is refused on either.
        for node in [cluster.node1, cluster.node2] {
            let code = try await refusalCode { try await cluster.connect(alice, to: node) }
            #expect(code == "limit_exceeded")
        }
        // The connected sockets and other users carry on.
        _ = try await ElementSocketTests.join(first, room)
        let bobSocket = try await cluster.connect(bob, to: cluster.node1)
        _ = try await ElementSocketTests.join(bobSocket, room)
        let sent = try await first.emitWithAck("message:send", ["roomId": .string(room), "text": "still here"])
        #expect(sent["data"]["message"]["text"] == "still here")
        #expect(try JSONValue(try await bobSocket.nextEvent("message:new"))["message"]["text"] == "still here")
        // A socket that closes frees its place.
        _ = try await second.close()
        #expect(try await eventually(within: .seconds(30)) { try await connects(cluster, alice, to: cluster.node1) })
        // A socket on a node that dies stops counting once its node's registry entry expired and
        // the other node reaped it.
        let onNode2 = try await cluster.connect(alice, to: cluster.node2)
        let refused = try await refusalCode { try await cluster.connect(alice, to: cluster.node1) }
        #expect(refused == "limit_exceeded")
        cluster.node2.process.signal(SIGKILL)
        _ = try await onNode2.waitForClose()
        #expect(try await eventually(within: .seconds(30)) { try await connects(cluster, alice, to: cluster.node1) })
    }

    /// The code of the CONNECT_ERROR that `connecting` ends with, or nil when it connected.
    private static func refusalCode(_ connecting: () async throws -> SocketIOTestClient) async throws -> String? {
        do {
            let client = try await connecting()
            _ = try? await client.close()
            return nil
        } catch SocketIOTestError.connectError(_, let code) {
            return code
        }
    }

    /// Whether a new socket of `user` is accepted (it is closed again at once).
    private static func connects(_ cluster: TwoNodeCluster, _ user: TestUser, to node: GatewayProcess) async throws -> Bool {
        try await refusalCode { try await cluster.connect(user, to: node) } == nil
    }

    @Test("string limits (messages.max_length, elements.max_content_length) are invalid_payload; the socket and the room carry on")
    func stringLimits() async throws {
        let environment = ["ROOMCAST_MESSAGES_MAX_LENGTH": "10", "ROOMCAST_ELEMENTS_MAX_CONTENT_LENGTH": "5"]
        try await TwoNodeCluster.with(environment: environment) { cluster in try await Self.stringLimitScenario(cluster) }
    }

    static func stringLimitScenario(_ cluster: TwoNodeCluster) async throws {
        let alice = try await cluster.register("alice")
        let bob = try await cluster.register("bob")
        let room = try await cluster.createRoom(by: alice, with: [bob])
        let socket = try await cluster.connect(alice, to: cluster.node1)
        let watcher = try await cluster.connect(bob, to: cluster.node2)
        _ = try await ElementSocketTests.join(socket, room)
        _ = try await ElementSocketTests.join(watcher, room)

        let long = try await socket.emitWithAck("message:send", ["roomId": .string(room), "text": "12345678901"])
        #expect(long["error"]["code"] == "invalid_payload")
        #expect(long["error"]["message"].stringValue?.contains("10") == true, "\(long)")
        let refused = try await socket.emitWithAck("element:create", ["roomId": .string(room), "element": ElementSocketTests.note(content: "123456")])
        #expect(refused["error"]["code"] == "invalid_payload")
        #expect(refused["error"]["message"].stringValue?.contains("content") == true, "\(refused)")
        let rest = try await ElementSocketTests.rest(
            "POST", "/api/rooms/\(room)/elements", as: bob,
            body: #"{"type":"note","positionX":0,"positionY":0,"width":1,"height":1,"content":"123456"}"#, on: cluster.node2
        )
        #expect(rest.status == 400, "\(rest.json)")
        #expect(rest.json["error"]["code"] == "invalid_payload")

        // At the limit it passes, and the watcher sees only what was accepted.
        let sent = try await socket.emitWithAck("message:send", ["roomId": .string(room), "text": "1234567890"])
        #expect(sent["data"]["message"]["text"] == "1234567890")
        #expect(try JSONValue(try await watcher.nextEvent("message:new"))["message"]["text"] == "1234567890")
        let created = try await ElementSocketTests.create(socket, room, ElementSocketTests.note(content: "12345"))
        let id = try #require(created["id"].stringValue, "\(created)")
        #expect(try JSONValue(try await watcher.nextEvent("element:created"))["element"]["content"] == "12345")
        let update = try await socket.emitWithAck("element:update", ["roomId": .string(room), "elementId": .string(id), "updates": ["content": "123456"]])
        #expect(update["error"]["code"] == "invalid_payload")
        try await Fence.message(in: room, from: socket, reaching: [watcher])
        try await watcher.expectNoEvent("element:updated", within: .milliseconds(300))
    }

    @Test("http.max_body_bytes: a larger REST body is 413 payload_too_large; smaller ones and sockets carry on")
    func restBodyLimit() async throws {
        try await TwoNodeCluster.with(environment: ["ROOMCAST_HTTP_MAX_BODY_BYTES": "2048"]) { cluster in
            try await Self.restBodyScenario(cluster)
        }
    }

    static func restBodyScenario(_ cluster: TwoNodeCluster) async throws {
        let alice = try await cluster.register("alice")
        let bob = try await cluster.register("bob")
        let room = try await cluster.createRoom(by: alice, with: [bob])
        let watcher = try await cluster.connect(bob, to: cluster.node2)
        _ = try await ElementSocketTests.join(watcher, room)
        let filler = String(repeating: "x", count: 2048)
        let big = try await ElementSocketTests.rest(
            "POST", "/api/rooms/\(room)/elements", as: alice,
            body: #"{"type":"note","positionX":0,"positionY":0,"width":1,"height":1,"content":"\#(filler)"}"#, on: cluster.node1
        )
        #expect(big.status == 413, "\(big.json)")
        #expect(big.json["error"]["code"] == "payload_too_large")
        #expect(big.json["error"]["message"].stringValue?.contains("2048") == true, "\(big.json)")
        try await watcher.expectNoEvent("element:created", within: .milliseconds(300))
        // The same node keeps serving, and the same content fits in a socket frame.
        let small = try await ElementSocketTests.rest(
            "POST", "/api/rooms/\(room)/elements", as: alice,
            body: #"{"type":"note","positionX":0,"positionY":0,"width":1,"height":1,"content":"small"}"#, on: cluster.node1
        )
        #expect(small.status == 201, "\(small.json)")
        #expect(try JSONValue(try await watcher.nextEvent("element:created"))["element"]["content"] == "small")
    }

    @Test("engineio.max_payload: a larger frame closes that socket (1009); the user's other socket and the room carry on")
    func payloadLimit() async throws {
        try await TwoNodeCluster.with(environment: ["ROOMCAST_ENGINEIO_MAX_PAYLOAD": "4096"]) { cluster in
            try await Self.payloadScenario(cluster)
        }
    }

    static func payloadScenario(_ cluster: TwoNodeCluster) async throws {
        let alice = try await cluster.register("alice")
        let bob = try await cluster.register("bob")
        let room = try await cluster.createRoom(by: alice, with: [bob])
        let big = try await cluster.connect(alice, to: cluster.node1)
        let other = try await cluster.connect(alice, to: cluster.node1)
        let watcher = try await cluster.connect(bob, to: cluster.node2)
        #expect(big.handshake.maxPayload == 4096)
        _ = try await ElementSocketTests.join(watcher, room)
        let text = String(repeating: "a", count: 5000)
        try? await big.sendRaw(text: #"42["message:send",{"roomId":"\#(room)","text":"\#(text)"}]"#)
        #expect(try await big.waitForClose() == 1009)
        try await watcher.expectNoEvent("message:new", within: .milliseconds(300))
        let sent = try await other.emitWithAck("message:send", ["roomId": .string(room), "text": "fits"])
        #expect(sent["data"]["message"]["text"] == "fits")
        #expect(try JSONValue(try await watcher.nextEvent("message:new"))["message"]["text"] == "fits")
    }
}
