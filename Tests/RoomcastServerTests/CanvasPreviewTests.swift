import Foundation
import RedisClient
@testable import RoomcastServer
import RoomcastTestSupport
import Testing

@Suite("PreviewThrottle")
struct PreviewThrottleTests {
    let start = ContinuousClock.now
    let interval = Duration.milliseconds(100)

    func at(_ milliseconds: Int) -> ContinuousClock.Instant { start + .milliseconds(milliseconds) }

    @Test("the first preview goes at once; sooner ones wait for the interval's end, the newest replacing the waiting one")
    func coalesces() {
        var throttle = PreviewThrottle<Int>(interval: interval)
        #expect(throttle.offer(1, key: "drag:a", now: at(0)) == .sendNow)
        #expect(throttle.offer(2, key: "drag:a", now: at(10)) == .sendAt(at(100)))
        #expect(throttle.offer(3, key: "drag:a", now: at(50)) == .replaced)
        #expect(throttle.offer(4, key: "drag:a", now: at(90)) == .replaced)
        // Another key has its own turn.
        #expect(throttle.offer(1, key: "cursor", now: at(60)) == .sendNow)
        // At the interval's end only the newest goes, and counts as sent then.
        #expect(throttle.takeDue("drag:a", now: at(100)) == 4)
        #expect(throttle.takeDue("drag:a", now: at(101)) == nil)
        #expect(throttle.offer(5, key: "drag:a", now: at(150)) == .sendAt(at(200)))
        #expect(throttle.takeDue("drag:a", now: at(205)) == 5)
        // Quiet for a whole interval: the next goes at once.
        #expect(throttle.offer(6, key: "drag:a", now: at(305)) == .sendNow)
    }

    @Test("at most one preview per key per interval leaves, however fast they come")
    func rate() {
        var throttle = PreviewThrottle<Int>(interval: interval)
        var sentAt: [Int] = []
        var due: Int?
        // 1,000 previews over one second, one a millisecond.
        for millisecond in 0..<1_000 {
            if let time = due, millisecond >= time, throttle.takeDue("cursor", now: at(millisecond)) != nil {
                sentAt.append(millisecond)
                due = nil
            }
            switch throttle.offer(millisecond, key: "cursor", now: at(millisecond)) {
            case .sendNow: sentAt.append(millisecond)
            case .sendAt(let instant): due = Int(((instant - start) / .milliseconds(1)).rounded(.up))
            case .replaced, .dropped: break
            }
        }
        #expect(sentAt.count == 10, "\(sentAt)")
        #expect(zip(sentAt, sentAt.dropFirst()).allSatisfy { $1 - $0 >= 100 }, "\(sentAt)")
    }

    @Test("keys are bounded: a socket with every key busy gets new ones dropped; idle keys are forgotten")
    func boundedKeys() {
        var throttle = PreviewThrottle<Int>(interval: interval, maxKeys: 3)
        for key in ["a", "b", "c"] { #expect(throttle.offer(0, key: key, now: at(0)) == .sendNow) }
        #expect(throttle.offer(0, key: "d", now: at(50)) == .dropped)
        #expect(throttle.offer(1, key: "a", now: at(50)) == .sendAt(at(100)))
        // b and c are idle after their interval, a still waits.
        #expect(throttle.offer(0, key: "d", now: at(150)) == .sendNow)
        #expect(throttle.keyCount == 2)
        #expect(throttle.takeDue("a", now: at(150)) == 1)
    }
}

/// `element:drag` and `cursor:move` on two nodes: relayed through pub/sub to the room's other
/// sockets, never stored, never replayed.
@Suite("Canvas previews on two nodes", .serialized)
struct CanvasPreviewTests {
    static func streamLength(_ cluster: TwoNodeCluster, _ room: String) async throws -> Int {
        try await cluster.withRedis { try await $0.send(RedisCommand("XLEN", "room:{\(room)}:stream"), as: Int.self) }
    }

    @Test("a drag and a cursor reach the room's other sockets on both nodes, not the sender, not the stream, not a late joiner")
    func relayed() async throws {
        try await TwoNodeCluster.with { cluster in
            let alice = try await cluster.register("alice")
            let bob = try await cluster.register("bob")
            let carol = try await cluster.register("carol")
            let room = try await cluster.createRoom(by: alice, with: [bob, carol])
            let aliceSocket = try await cluster.connect(alice, to: cluster.node1)
            let bobSocket = try await cluster.connect(bob, to: cluster.node2)
            let bobOnNode1 = try await cluster.connect(bob, to: cluster.node1)
            for socket in [aliceSocket, bobSocket, bobOnNode1] { _ = try await ElementSocketTests.join(socket, room) }
            let element = try #require(try await ElementSocketTests.create(aliceSocket, room)["id"].stringValue)
            let streamBefore = try await Self.streamLength(cluster, room)

            let drag = try await aliceSocket.emitWithAck(
                "element:drag", ["roomId": .string(room), "elementId": .string(element), "positionX": 12.5, "positionY": -3]
            )
            #expect(drag == ["data": ["roomId": .string(room)]])
            for socket in [bobSocket, bobOnNode1] {
                let received = try JSONValue(try await socket.nextEvent("element:drag"))
                #expect(
                    received == [
                        "roomId": .string(room), "elementId": .string(element), "userId": .string(alice.id), "positionX": 12.5, "positionY": -3,
                    ]
                )
            }
            let cursor = try await bobSocket.emitWithAck("cursor:move", ["roomId": .string(room), "x": 640, "y": 0.25])
            #expect(cursor == ["data": ["roomId": .string(room)]])
            for socket in [aliceSocket, bobOnNode1] {
                let received = try JSONValue(try await socket.nextEvent("cursor:move"))
                #expect(received == ["roomId": .string(room), "userId": .string(bob.id), "x": 640, "y": 0.25])
            }
            // Nothing reached the room's stream: no offset, no replay.
            #expect(try await Self.streamLength(cluster, room) == streamBefore)

            // A late joiner gets the persisted state only.
            let carolSocket = try await cluster.connect(carol, to: cluster.node2)
            let batch = try await ElementSocketTests.join(carolSocket, room)
            #expect(batch["elements"][0]["positionX"] != 12.5)
            // The senders never got their own previews, the joiner none from before it joined
            // (the fence: a room event sent after them has reached every socket).
            try await Fence.message(in: room, from: aliceSocket, reaching: [aliceSocket, bobSocket, bobOnNode1, carolSocket])
            #expect(await aliceSocket.events(named: "element:drag").isEmpty)
            #expect(await bobSocket.events(named: "cursor:move").isEmpty)
            #expect(await carolSocket.events(named: "element:drag").isEmpty)
            #expect(await carolSocket.events(named: "cursor:move").isEmpty)
        }
    }

    @Test("the newest of a burst of drags always arrives, in order; coalesced at canvas.preview_hz")
    func burstKeepsTheNewest() async throws {
        try await TwoNodeCluster.with(environment: ["ROOMCAST_CANVAS_PREVIEW_HZ": "2"]) { cluster in
            let alice = try await cluster.register("alice")
            let bob = try await cluster.register("bob")
            let room = try await cluster.createRoom(by: alice, with: [bob])
            let aliceSocket = try await cluster.connect(alice, to: cluster.node1)
            let bobSocket = try await cluster.connect(bob, to: cluster.node2)
            for socket in [aliceSocket, bobSocket] { _ = try await ElementSocketTests.join(socket, room) }
            let element = try #require(try await ElementSocketTests.create(aliceSocket, room)["id"].stringValue)
            for position in 1...10 {
                try await aliceSocket.emit(
                    "element:drag", ["roomId": .string(room), "elementId": .string(element), "positionX": .number(Double(position)), "positionY": 0]
                )
            }
            let arrived = try await eventually(within: .seconds(30)) {
                await bobSocket.events(named: "element:drag").contains { (try? JSONValue($0))?["positionX"] == 10 }
            }
            #expect(arrived, "the last position never arrived")
            let positions = await bobSocket.events(named: "element:drag").compactMap { try? JSONValue($0)["positionX"].intValue }
            #expect(positions.first == 1)
            #expect(positions == positions.sorted() && Set(positions).count == positions.count, "\(positions)")
            #expect(positions.count <= 10)
        }
    }

    @Test("previews from a socket not in the room, or with bad payloads, get clear errors; the socket carries on")
    func refused() async throws {
        try await TwoNodeCluster.with { cluster in
            let alice = try await cluster.register("alice")
            let bob = try await cluster.register("bob")
            let eve = try await cluster.register("eve")
            let room = try await cluster.createRoom(by: alice, with: [bob])
            let aliceSocket = try await cluster.connect(alice, to: cluster.node1)
            let eveSocket = try await cluster.connect(eve, to: cluster.node2)
            let element = try #require(try await ElementSocketTests.create(aliceSocket, room)["id"].stringValue)

            // A participant who has not joined, and an outsider: forbidden.
            for socket in [aliceSocket, eveSocket] {
                let ack = try await socket.emitWithAck("cursor:move", ["roomId": .string(room), "x": 1, "y": 2])
                #expect(ack["error"]["code"] == "forbidden", "\(ack)")
            }
            _ = try await ElementSocketTests.join(aliceSocket, room)
            let invalid: [(JSONValue, String)] = [
                (["roomId": .string(room), "elementId": .string(element), "positionX": "a", "positionY": 0], "positionX"),
                (["roomId": .string(room), "elementId": .string(element), "positionX": 1e8, "positionY": 0], "positionX"),
                (["roomId": .string(room), "elementId": .string(element), "positionX": 0], "positionY"),
                (["roomId": .string(room), "elementId": "not an id", "positionX": 0, "positionY": 0], "elementId"),
                (["roomId": .string(room), "x": 0, "y": 0], "elementId"),
            ]
            for (payload, field) in invalid {
                let ack = try await aliceSocket.emitWithAck("element:drag", payload)
                #expect(ack["error"]["code"] == "invalid_payload", "\(payload): \(ack)")
                #expect(ack["error"]["message"].stringValue?.contains(field) == true, "\(payload): \(ack)")
            }
            let cursor = try await aliceSocket.emitWithAck("cursor:move", ["roomId": .string(room), "x": -1e7, "y": 2e7])
            #expect(cursor["error"]["code"] == "invalid_payload", "\(cursor)")
            // Without an ack: an `error` event naming the event.
            try await aliceSocket.emit("cursor:move", ["roomId": .string(room), "x": "left"])
            let error = try JSONValue(try await aliceSocket.nextEvent("error"))
            #expect(error["code"] == "invalid_payload")
            #expect(error["event"] == "cursor:move")
            // Still usable.
            #expect(try await aliceSocket.emitWithAck("cursor:move", ["roomId": .string(room), "x": 3, "y": 4]) == ["data": ["roomId": .string(room)]])
        }
    }

    @Test("previews have a budget of their own: 4 × canvas.preview_hz a second, apart from other events")
    func budget() async throws {
        let environment = ["ROOMCAST_CANVAS_PREVIEW_HZ": "1", "ROOMCAST_SOCKET_EVENTS_PER_SECOND": "1", "ROOMCAST_SOCKET_EVENT_BURST": "1"]
        try await TwoNodeCluster.with(environment: environment) { cluster in
            let alice = try await cluster.register("alice")
            let bob = try await cluster.register("bob")
            let room = try await cluster.createRoom(by: alice, with: [bob])
            let socket = try await cluster.connect(alice, to: cluster.node1)
            _ = try await ElementSocketTests.join(socket, room)
            // Forty at once, without waiting: a burst of 8 passes, the refill (4 a second) adds
            // what the elapsed time allows; the join spent the one-event budget, not this one.
            let clock = ContinuousClock()
            let start = clock.now
            // Ack ids far from the client's own counter.
            for x in 0..<40 {
                try await socket.sendRaw(text: #"42\#(1000 + x)["cursor:move",{"roomId":"\#(room)","x":\#(x),"y":0}]"#)
            }
            var codes: [String] = []
            for x in 0..<40 {
                let ack = try JSONValue(try await socket.nextAck(1000 + x))
                codes.append(ack["error"]["code"].stringValue ?? "ok")
            }
            let elapsed = clock.now - start
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            let accepted = codes.filter { $0 == "ok" }.count
            #expect(codes.prefix(8).allSatisfy { $0 == "ok" }, "\(codes)")
            #expect(accepted <= 8 + Int((4 * seconds).rounded(.up)), "\(codes) in \(elapsed)")
            #expect(Set(codes).isSubset(of: ["ok", "rate_limited"]), "\(codes)")
        }
    }
}
