import Foundation
@testable import RoomcastServer
import RoomcastTestSupport
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
            var codes: [String] = []
            for _ in 0..<10 {
                let ack = try await socket.emitWithAck("room:leave", ["roomId": .string(room)])
                codes.append(ack["error"]["code"].stringValue ?? "ok")
            }
            #expect(codes.prefix(3).allSatisfy { $0 == "ok" }, "\(codes)")
            // Three come from the burst; at most a few more from the refill while these ran.
            #expect(codes.filter { $0 == "rate_limited" }.count >= 3, "\(codes)")
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
            #expect(try await eventually(within: .seconds(5)) {
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
}
