import Foundation
import NIOCore
import RedisClient
import RoomcastCore
import RoomcastTestSupport
import Testing

/// Reactions, unseen counts and presence over Socket.IO and REST on two nodes sharing one Redis:
/// the events of docs/clients/events.md, seen from each recipient's sockets.
@Suite("Live room: reactions, unseen counts and presence on two nodes", .serialized)
struct LiveRoomTests {
    // MARK: Helpers

    static func join(_ socket: SocketIOTestClient, _ room: String) async throws -> JSONValue {
        try await ElementSocketTests.join(socket, room)
    }

    static func create(_ socket: SocketIOTestClient, _ room: String) async throws -> String {
        let element = try await ElementSocketTests.create(socket, room)
        return try #require(element["id"].stringValue)
    }

    static func toggle(_ socket: SocketIOTestClient, _ room: String, _ element: String) async throws -> JSONValue {
        let ack = try await socket.emitWithAck("element:reaction:toggle", ["roomId": .string(room), "elementId": .string(element)])
        #expect(ack.keys == ["data"], "\(ack)")
        return ack["data"]
    }

    static func event(_ socket: SocketIOTestClient, _ name: String, timeout: Duration = .seconds(30)) async throws -> JSONValue {
        try JSONValue(try await socket.nextEvent(name, timeout: timeout))
    }

    static func ids(_ users: JSONValue) -> [String] {
        users.arrayValue?.compactMap { $0["id"].stringValue } ?? []
    }

    /// The payload with `stats.hasReacted` taken out, for comparing what two recipients got.
    static func withoutHasReacted(_ payload: JSONValue) -> JSONValue {
        guard var object = payload.objectValue, var stats = payload["stats"].objectValue else { return payload }
        stats["hasReacted"] = nil
        object["stats"] = .object(stats)
        return .object(object)
    }

    /// Checks a toggle answer: `{action, reaction, elementStats}` for the toggler.
    static func expectToggle(
        _ data: JSONValue, _ action: String, by user: TestUser, element: String, total: Int, hasReacted: Bool, top: [TestUser],
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(data.keys == ["action", "reaction", "elementStats"], "\(data)", sourceLocation: sourceLocation)
        #expect(data["action"].stringValue == action, sourceLocation: sourceLocation)
        #expect(data["reaction"].keys == ["id", "elementId", "userId", "type", "createdAt", "user"], "\(data)", sourceLocation: sourceLocation)
        #expect(data["reaction"]["elementId"].stringValue == element, sourceLocation: sourceLocation)
        #expect(data["reaction"]["userId"].stringValue == user.id, sourceLocation: sourceLocation)
        #expect(data["reaction"]["type"] == "heart", sourceLocation: sourceLocation)
        #expect(data["reaction"]["user"]["id"].stringValue == user.id, sourceLocation: sourceLocation)
        #expect(data["reaction"]["user"]["username"].stringValue == user.username, sourceLocation: sourceLocation)
        #expect(
            data["reaction"]["createdAt"].stringValue?.wholeMatch(of: /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/) != nil, sourceLocation: sourceLocation
        )
        #expect(data["elementStats"].keys == ["totalReactions", "hasReacted", "topReactors"], sourceLocation: sourceLocation)
        #expect(data["elementStats"]["totalReactions"].intValue == total, sourceLocation: sourceLocation)
        #expect(data["elementStats"]["hasReacted"].boolValue == hasReacted, sourceLocation: sourceLocation)
        #expect(Self.ids(data["elementStats"]["topReactors"]) == top.map(\.id), sourceLocation: sourceLocation)
    }

    /// Checks `stats` of a reaction event as one recipient got it.
    static func expectStats(
        _ payload: JSONValue, total: Int, hasReacted: Bool, top: [TestUser], sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(payload["stats"].keys == ["totalReactions", "hasReacted", "topReactors"], "\(payload)", sourceLocation: sourceLocation)
        #expect(payload["stats"]["totalReactions"].intValue == total, "\(payload)", sourceLocation: sourceLocation)
        #expect(payload["stats"]["hasReacted"].boolValue == hasReacted, "\(payload)", sourceLocation: sourceLocation)
        #expect(Self.ids(payload["stats"]["topReactors"]) == top.map(\.id), "\(payload)", sourceLocation: sourceLocation)
    }

    /// An element's `reactions` for a viewer.
    static func expectReactions(
        _ reactions: JSONValue, count: Int, hasReacted: Bool, top: [TestUser], sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(reactions.keys == ["count", "hasReacted", "userReaction", "topReactors"], "\(reactions)", sourceLocation: sourceLocation)
        #expect(reactions["count"].intValue == count, "\(reactions)", sourceLocation: sourceLocation)
        #expect(reactions["hasReacted"].boolValue == hasReacted, "\(reactions)", sourceLocation: sourceLocation)
        #expect(reactions["userReaction"] == (hasReacted ? "heart" : .null), "\(reactions)", sourceLocation: sourceLocation)
        #expect(Self.ids(reactions["topReactors"]) == top.map(\.id), "\(reactions)", sourceLocation: sourceLocation)
    }

    static func presence(_ room: String, _ users: [TestUser], offset: JSONValue) -> JSONValue {
        [
            "roomId": .string(room), "isActive": .bool(!users.isEmpty),
            "activeUserIds": .array(users.map(\.id).sorted().map(JSONValue.string)), "offset": offset,
        ]
    }

    /// Waits for the next `room:presence` and checks it lists exactly `users`.
    @discardableResult
    static func expectPresence(
        _ socket: SocketIOTestClient, _ room: String, _ users: [TestUser], timeout: Duration = .seconds(30),
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> JSONValue {
        let event = try await Self.event(socket, "room:presence", timeout: timeout)
        #expect(event == Self.presence(room, users, offset: event["offset"]), sourceLocation: sourceLocation)
        #expect(event["offset"].stringValue.flatMap { StreamOffset($0) } != nil, "\(event)", sourceLocation: sourceLocation)
        return event
    }

    // MARK: Reactions

    @Test("hasReacted is right for each recipient across two nodes: reactors see true, everyone else false")
    func perRecipientHasReacted() async throws {
        try await TwoNodeCluster.with { cluster in
            let alice = try await cluster.register("alice")
            let bob = try await cluster.register("bob")
            let carol = try await cluster.register("carol")
            let room = try await cluster.createRoom(by: alice, with: [bob, carol])
            let aliceSocket = try await cluster.connect(alice, to: cluster.node1)
            let bobSocket = try await cluster.connect(bob, to: cluster.node2)
            let bobOnNode1 = try await cluster.connect(bob, to: cluster.node1)
            let carolSocket = try await cluster.connect(carol, to: cluster.node2)
            for socket in [aliceSocket, bobSocket, bobOnNode1, carolSocket] { _ = try await Self.join(socket, room) }
            let element = try await Self.create(aliceSocket, room)

            // Alice reacts: her socket sees true, Bob's (both nodes) and Carol's false.
            let aliceAck = try await Self.toggle(aliceSocket, room, element)
            Self.expectToggle(aliceAck, "added", by: alice, element: element, total: 1, hasReacted: true, top: [alice])
            let atAlice = try await Self.event(aliceSocket, "element:reaction:added")
            let atBob = try await Self.event(bobSocket, "element:reaction:added")
            let atBob1 = try await Self.event(bobOnNode1, "element:reaction:added")
            let atCarol = try await Self.event(carolSocket, "element:reaction:added")
            #expect(atAlice.keys == ["roomId", "elementId", "reaction", "stats", "offset"])
            #expect(atAlice["roomId"].stringValue == room)
            #expect(atAlice["elementId"].stringValue == element)
            #expect(atAlice["reaction"] == aliceAck["reaction"])
            Self.expectStats(atAlice, total: 1, hasReacted: true, top: [alice])
            Self.expectStats(atBob, total: 1, hasReacted: false, top: [alice])
            Self.expectStats(atBob1, total: 1, hasReacted: false, top: [alice])
            Self.expectStats(atCarol, total: 1, hasReacted: false, top: [alice])
            // Otherwise the same event, offset included.
            for other in [atBob, atBob1, atCarol] { #expect(Self.withoutHasReacted(other) == Self.withoutHasReacted(atAlice)) }

            // Bob reacts: Bob (both sockets) and Alice see true, Carol false.
            let bobAck = try await Self.toggle(bobSocket, room, element)
            Self.expectToggle(bobAck, "added", by: bob, element: element, total: 2, hasReacted: true, top: [bob, alice])
            let second = (
                alice: try await Self.event(aliceSocket, "element:reaction:added"), bob: try await Self.event(bobSocket, "element:reaction:added"),
                bob1: try await Self.event(bobOnNode1, "element:reaction:added"), carol: try await Self.event(carolSocket, "element:reaction:added")
            )
            Self.expectStats(second.bob, total: 2, hasReacted: true, top: [bob, alice])
            Self.expectStats(second.bob1, total: 2, hasReacted: true, top: [bob, alice])
            Self.expectStats(second.alice, total: 2, hasReacted: true, top: [bob, alice])
            Self.expectStats(second.carol, total: 2, hasReacted: false, top: [bob, alice])
            #expect(second.carol["reaction"] == bobAck["reaction"])
            #expect(try #require(StreamOffset(second.carol["offset"].stringValue ?? "")) > (try #require(StreamOffset(atCarol["offset"].stringValue ?? ""))))

            // Alice takes hers back: removed {userId, stats}; Bob still true, Alice and Carol false.
            let removeAck = try await Self.toggle(aliceSocket, room, element)
            Self.expectToggle(removeAck, "removed", by: alice, element: element, total: 1, hasReacted: false, top: [bob])
            #expect(removeAck["reaction"] == aliceAck["reaction"])
            let removed = (
                alice: try await Self.event(aliceSocket, "element:reaction:removed"), bob: try await Self.event(bobSocket, "element:reaction:removed"),
                bob1: try await Self.event(bobOnNode1, "element:reaction:removed"), carol: try await Self.event(carolSocket, "element:reaction:removed")
            )
            #expect(removed.alice.keys == ["roomId", "elementId", "userId", "stats", "offset"])
            #expect(removed.alice["userId"].stringValue == alice.id)
            #expect(removed.alice["elementId"].stringValue == element)
            Self.expectStats(removed.alice, total: 1, hasReacted: false, top: [bob])
            Self.expectStats(removed.bob, total: 1, hasReacted: true, top: [bob])
            Self.expectStats(removed.bob1, total: 1, hasReacted: true, top: [bob])
            Self.expectStats(removed.carol, total: 1, hasReacted: false, top: [bob])
            #expect(Self.withoutHasReacted(removed.bob) == Self.withoutHasReacted(removed.carol))
        }
    }

    @Test("the REST toggle emits the same socket events as the socket toggle; GET reactions lists them")
    func restToggleAndList() async throws {
        try await TwoNodeCluster.with { cluster in
            let alice = try await cluster.register("alice")
            let bob = try await cluster.register("bob")
            let eve = try await cluster.register("eve")
            let room = try await cluster.createRoom(by: alice, with: [bob])
            let aliceSocket = try await cluster.connect(alice, to: cluster.node1)
            let bobSocket = try await cluster.connect(bob, to: cluster.node2)
            for socket in [aliceSocket, bobSocket] { _ = try await Self.join(socket, room) }
            let element = try await Self.create(aliceSocket, room)
            let base = "/api/rooms/\(room)/elements/\(element)/reactions"

            // Bob toggles over REST on node 1; both sockets get element:reaction:added.
            let response = try await ElementSocketTests.rest("POST", base + "/toggle", as: bob, on: cluster.node1)
            #expect(response.status == 200, "\(response.json)")
            #expect(response.json.keys == ["data"])
            Self.expectToggle(response.json["data"], "added", by: bob, element: element, total: 1, hasReacted: true, top: [bob])
            let atBob = try await Self.event(bobSocket, "element:reaction:added")
            let atAlice = try await Self.event(aliceSocket, "element:reaction:added")
            #expect(atBob.keys == ["roomId", "elementId", "reaction", "stats", "offset"])
            #expect(atBob["reaction"] == response.json["data"]["reaction"])
            Self.expectStats(atBob, total: 1, hasReacted: true, top: [bob])
            Self.expectStats(atAlice, total: 1, hasReacted: false, top: [bob])

            // Alice over the socket: the same shape.
            let socketAck = try await Self.toggle(aliceSocket, room, element)
            Self.expectToggle(socketAck, "added", by: alice, element: element, total: 2, hasReacted: true, top: [alice, bob])
            let bySocket = try await Self.event(bobSocket, "element:reaction:added")
            #expect(bySocket.keys == atBob.keys)
            #expect(bySocket["reaction"].keys == atBob["reaction"].keys)
            Self.expectStats(bySocket, total: 2, hasReacted: true, top: [alice, bob])
            _ = try await Self.event(aliceSocket, "element:reaction:added")

            // GET: newest first, total, hasReacted for the caller (REST on either node).
            let listed = try await ElementSocketTests.rest("GET", base, as: bob, on: cluster.node2)
            #expect(listed.status == 200, "\(listed.json)")
            #expect(listed.json["data"].keys == ["reactions", "total", "hasReacted"])
            #expect(listed.json["data"]["total"] == 2)
            #expect(listed.json["data"]["hasReacted"] == true)
            #expect(listed.json["data"]["reactions"] == [socketAck["reaction"], response.json["data"]["reaction"]])

            // Bob removes his over REST on node 2: element:reaction:removed for both.
            let removal = try await ElementSocketTests.rest("POST", base + "/toggle", as: bob, on: cluster.node2)
            #expect(removal.status == 200, "\(removal.json)")
            Self.expectToggle(removal.json["data"], "removed", by: bob, element: element, total: 1, hasReacted: false, top: [alice])
            let removedAtAlice = try await Self.event(aliceSocket, "element:reaction:removed")
            #expect(removedAtAlice.keys == ["roomId", "elementId", "userId", "stats", "offset"])
            #expect(removedAtAlice["userId"].stringValue == bob.id)
            Self.expectStats(removedAtAlice, total: 1, hasReacted: true, top: [alice])
            Self.expectStats(try await Self.event(bobSocket, "element:reaction:removed"), total: 1, hasReacted: false, top: [alice])
            let afterRemoval = try await ElementSocketTests.rest("GET", base, as: bob, on: cluster.node1)
            #expect(afterRemoval.json["data"] == ["reactions": [socketAck["reaction"]], "total": 1, "hasReacted": false])

            // Refusals: non-participant forbidden, unknown element not_found, no token 401.
            for (method, path) in [("POST", base + "/toggle"), ("GET", base)] {
                let forbidden = try await ElementSocketTests.rest(method, path, as: eve, on: cluster.node1)
                #expect(forbidden.status == 403, "\(method) \(path): \(forbidden.json)")
                #expect(forbidden.json["error"]["code"] == "forbidden")
                let missing = try await ElementSocketTests.rest(
                    method, path.replacingOccurrences(of: element, with: "0123456789abcdef0123456789abcdef"), as: bob, on: cluster.node1
                )
                #expect(missing.status == 404, "\(method): \(missing.json)")
                #expect(missing.json["error"]["code"] == "not_found")
                let anonymous = try await ElementSocketTests.rest(method, path, as: nil, on: cluster.node1)
                #expect(anonymous.status == 401)
            }
            let eveSocket = try await cluster.connect(eve, to: cluster.node2)
            let refused = try await eveSocket.emitWithAck("element:reaction:toggle", ["roomId": .string(room), "elementId": .string(element)])
            #expect(refused["error"]["code"] == "forbidden")
            let unknown = try await bobSocket.emitWithAck("element:reaction:toggle", ["roomId": .string(room), "elementId": "0123456789abcdef0123456789abcdef"])
            #expect(unknown["error"]["code"] == "not_found")
            let invalid = try await bobSocket.emitWithAck("element:reaction:toggle", ["roomId": .string(room)])
            #expect(invalid["error"]["code"] == "invalid_payload")
            // Nothing changed and nothing more was sent (fenced: every room event up to a later
            // message has reached Alice, whatever the machine's speed).
            try await Fence.message(in: room, from: bobSocket, reaching: [aliceSocket])
            try await aliceSocket.expectNoEvent("element:reaction:added", within: .milliseconds(300))
            try await aliceSocket.expectNoEvent("element:reaction:removed", within: .milliseconds(10))
            #expect(try await ElementSocketTests.rest("GET", base, as: alice, on: cluster.node2).json["data"]["total"] == 1)
        }
    }

    @Test("elements:batch, element:transformed, acks and REST carry reactions as each viewer sees them")
    func elementsCarryReactionsForTheViewer() async throws {
        try await TwoNodeCluster.with { cluster in
            let alice = try await cluster.register("alice")
            let bob = try await cluster.register("bob")
            let room = try await cluster.createRoom(by: alice, with: [bob])
            let aliceSocket = try await cluster.connect(alice, to: cluster.node1)
            let bobSocket = try await cluster.connect(bob, to: cluster.node2)
            for socket in [aliceSocket, bobSocket] { _ = try await Self.join(socket, room) }
            let hearted = try await Self.create(aliceSocket, room)
            let plain = try await Self.create(aliceSocket, room)
            _ = try await Self.toggle(bobSocket, room, hearted)

            // A later join: the batch shows Bob's heart as Bob's, and as someone else's to Alice.
            let aliceLate = try await cluster.connect(alice, to: cluster.node2)
            let bobLate = try await cluster.connect(bob, to: cluster.node1)
            let aliceBatch = try await Self.join(aliceLate, room)["elements"]
            let bobBatch = try await Self.join(bobLate, room)["elements"]
            #expect(Self.ids(aliceBatch) == [hearted, plain])
            #expect(Self.ids(bobBatch) == [hearted, plain])
            Self.expectReactions(aliceBatch[0]["reactions"], count: 1, hasReacted: false, top: [bob])
            Self.expectReactions(bobBatch[0]["reactions"], count: 1, hasReacted: true, top: [bob])
            #expect(aliceBatch[1]["reactions"] == .null)
            #expect(aliceBatch[1].objectValue?.keys.contains("reactions") == true)
            #expect(bobBatch[1]["reactions"] == .null)

            // REST lists the same per caller.
            let aliceList = try await ElementSocketTests.elements(cluster, room, as: alice, on: cluster.node2)
            let bobList = try await ElementSocketTests.elements(cluster, room, as: bob)
            #expect(aliceList == aliceBatch.arrayValue)
            #expect(bobList == bobBatch.arrayValue)

            // A transform by Alice: her ack and her sockets show her view, Bob's sockets his.
            let ack = try await aliceSocket.emitWithAck("element:transform", ["roomId": .string(room), "elementId": .string(hearted), "rotation": 15])
            Self.expectReactions(ack["data"]["element"]["reactions"], count: 1, hasReacted: false, top: [bob])
            #expect(ack["data"]["element"]["rotation"] == 15)
            #expect(ack["data"]["element"]["zIndex"] == 3)
            let views = [
                (aliceSocket, false), (aliceLate, false), (bobSocket, true), (bobLate, true),
            ]
            var seen: [JSONValue] = []
            for (socket, hasReacted) in views {
                let event = try await Self.event(socket, "element:transformed")
                #expect(event.keys == ["roomId", "element", "offset"])
                Self.expectReactions(event["element"]["reactions"], count: 1, hasReacted: hasReacted, top: [bob])
                seen.append(event)
            }
            #expect(seen[0] == seen[1])
            #expect(seen[2] == seen[3])
            #expect(seen[0]["element"] == ack["data"]["element"])
            var bobsElement = seen[2]["element"].objectValue!
            bobsElement["reactions"] = ack["data"]["element"]["reactions"]
            #expect(JSONValue.object(bobsElement) == ack["data"]["element"])
            #expect(seen[0]["offset"] == seen[2]["offset"])

            // Without hearts, a transformed element carries reactions null to everyone.
            _ = try await bobSocket.emitWithAck("element:transform", ["roomId": .string(room), "elementId": .string(plain), "scaleX": 2])
            for socket in [aliceSocket, bobSocket] {
                let event = try await Self.event(socket, "element:transformed")
                #expect(event["element"]["id"].stringValue == plain)
                #expect(event["element"]["reactions"] == .null)
            }

            // A REST PATCH answers with the element, in the caller's view too (a socket's
            // `element:update` ack carries only the change).
            let patched = try await ElementSocketTests.rest("PATCH", "/api/rooms/\(room)/elements/\(hearted)", as: alice, body: #"{"content":"again"}"#, on: cluster.node2)
            #expect(patched.status == 200, "\(patched.json)")
            Self.expectReactions(patched.json["data"]["reactions"], count: 1, hasReacted: false, top: [bob])

            // Bob takes his heart back: reactions null again everywhere.
            _ = try await Self.toggle(bobLate, room, hearted)
            for element in try await ElementSocketTests.elements(cluster, room, as: bob) { #expect(element["reactions"] == .null) }
        }
    }

    // MARK: Unseen counts

    @Test("a socket that opens a room already open on another of its user's sockets gets room:seen; the user's other sockets, whose counts did not change, get nothing")
    func roomSeenWhenAlreadyOpen() async throws {
        try await TwoNodeCluster.with { cluster in
            let alice = try await cluster.register("alice")
            let bob = try await cluster.register("bob")
            let room = try await cluster.createRoom(by: alice, with: [bob])
            let other = try await cluster.createRoom(by: alice, with: [bob])
            let opener = try await cluster.connect(bob, to: cluster.node1)
            let second = try await cluster.connect(bob, to: cluster.node2)
            let away = try await cluster.connect(bob, to: cluster.node1)
            @Sendable func seen(_ socket: SocketIOTestClient) async -> [String] {
                await socket.events(named: "room:seen").compactMap { try? JSONValue($0)["roomId"].stringValue }
            }

            // The room opens for Bob: every socket of his hears it.
            _ = try await Self.join(opener, room)
            for socket in [opener, second, away] {
                #expect(try await eventually { await seen(socket) == [room] })
            }
            // Open already: the joining socket alone is told.
            _ = try await Self.join(second, room)
            #expect(try await eventually { await seen(second) == [room, room] })
            // Another room opens: Bob's user events come in order, so a room:seen of the second
            // join would have reached the others before this one.
            _ = try await Self.join(opener, other)
            #expect(try await eventually { await seen(second) == [room, room, other] })
            for socket in [opener, away] {
                #expect(try await eventually { await seen(socket).count == 2 })
                #expect(await seen(socket) == [room, other])
            }
        }
    }

    @Test("unseen counts: away users count up in element:created:global, joining sends room:seen to every device, present users stay at 0")
    func unseenCounts() async throws {
        try await TwoNodeCluster.with { cluster in
            let alice = try await cluster.register("alice")
            let bob = try await cluster.register("bob")
            let outsider = try await cluster.register("outsider")
            let room = try await cluster.createRoom(by: alice, with: [bob])
            let aliceSocket = try await cluster.connect(alice, to: cluster.node1)
            // Bob is connected on both nodes but has not opened the room.
            let bobOnNode2 = try await cluster.connect(bob, to: cluster.node2)
            let bobOnNode1 = try await cluster.connect(bob, to: cluster.node1)
            let outsiderSockets = [try await cluster.connect(outsider, to: cluster.node1), try await cluster.connect(outsider, to: cluster.node2)]
            _ = try await Self.join(aliceSocket, room)
            // Alice's own join tells her devices the room was seen.
            #expect(try await Self.event(aliceSocket, "room:seen") == ["roomId": .string(room), "unseenCount": 0])

            var elements: [String] = []
            for expected in 1...2 {
                let element = try await Self.create(aliceSocket, room)
                elements.append(element)
                for socket in [bobOnNode2, bobOnNode1] {
                    let event = try await Self.event(socket, "element:created:global")
                    #expect(
                        event == [
                            "roomId": .string(room), "elementId": .string(element), "createdBy": .string(alice.id), "type": "note",
                            "elementCount": .number(Double(expected)), "unseenCount": .number(Double(expected)),
                        ]
                    )
                }
                // The creator's own sockets get it too, at 0.
                let own = try await Self.event(aliceSocket, "element:created:global")
                #expect(own["unseenCount"] == 0)
                #expect(own["elementId"].stringValue == element)
            }
            // Bob is not in the room: no room events for him.
            try await bobOnNode2.expectNoEvent("element:created", within: .milliseconds(100))

            // Bob opens the room on node 2: room:seen {unseenCount: 0} on both of his sockets.
            _ = try await Self.join(bobOnNode2, room)
            for socket in [bobOnNode2, bobOnNode1] {
                #expect(try await Self.event(socket, "room:seen") == ["roomId": .string(room), "unseenCount": 0])
            }
            // Alice's sockets do not get Bob's room:seen.
            try await aliceSocket.expectNoEvent("room:seen", within: .milliseconds(200))

            // While Bob has the room open, creates keep him at 0, on both of his sockets.
            let third = try await Self.create(aliceSocket, room)
            for socket in [bobOnNode2, bobOnNode1] {
                let event = try await Self.event(socket, "element:created:global")
                #expect(event["elementId"].stringValue == third)
                #expect(event["elementCount"] == 3)
                #expect(event["unseenCount"] == 0)
            }
            // Bob's own creates count for Alice only if she is away; she is present: 0.
            _ = try await Self.create(bobOnNode2, room)
            #expect(try await Self.event(aliceSocket, "element:created:global")["unseenCount"] == 0)
            #expect(try await Self.event(aliceSocket, "element:created:global")["unseenCount"] == 0)

            // Bob leaves: away again, counting from 0; delete and clear do not lower it.
            _ = try await bobOnNode2.emitWithAck("room:leave", ["roomId": .string(room)])
            for socket in [bobOnNode2, bobOnNode1] {
                #expect(try await Self.event(socket, "element:created:global")["unseenCount"] == 0)  // Bob's own
            }
            // Let the leave reach Redis (it is not awaited by the ack).
            #expect(try await eventually { try await cluster.withRedis { try await $0.send(RedisCommand("ZCARD", "room:{\(room)}:presence"), as: Int.self) } == 1 })
            let fifth = try await Self.create(aliceSocket, room)
            for socket in [bobOnNode2, bobOnNode1] {
                let event = try await Self.event(socket, "element:created:global")
                #expect(event["elementId"].stringValue == fifth)
                #expect(event["unseenCount"] == 1)
                #expect(event["elementCount"] == 5)
            }
            #expect(try await aliceSocket.emitWithAck("element:delete", ["roomId": .string(room), "elementId": .string(elements[0])])["data"]["elementId"].stringValue == elements[0])
            for socket in [bobOnNode2, bobOnNode1] {
                #expect(
                    try await Self.event(socket, "element:deleted:global") == [
                        "roomId": .string(room), "elementId": .string(elements[0]), "deletedBy": .string(alice.id), "elementCount": 4, "unseenCount": 1,
                    ]
                )
            }
            #expect(try await Self.event(aliceSocket, "element:deleted:global")["unseenCount"] == 0)
            _ = try await aliceSocket.emitWithAck("room:clear", ["roomId": .string(room)])
            for socket in [bobOnNode2, bobOnNode1] {
                #expect(
                    try await Self.event(socket, "room:cleared:global") == [
                        "roomId": .string(room), "clearedBy": .string(alice.id), "elementCount": 0, "unseenCount": 1,
                    ]
                )
            }
            // REST creates count the same way.
            let response = try await ElementSocketTests.rest(
                "POST", "/api/rooms/\(room)/elements", as: alice, body: #"{"type":"sticker","positionX":1,"positionY":2,"width":3,"height":4}"#, on: cluster.node2
            )
            #expect(response.status == 201)
            for socket in [bobOnNode2, bobOnNode1] {
                let event = try await Self.event(socket, "element:created:global")
                #expect(event["type"] == "sticker")
                #expect(event["unseenCount"] == 2)
                #expect(event["elementCount"] == 1)
            }

            // Someone who is not a participant got no global event at all, on either node.
            for socket in outsiderSockets {
                for name in ["element:created:global", "element:deleted:global", "room:cleared:global", "room:seen"] {
                    try await socket.expectNoEvent(name, within: .milliseconds(name == "element:created:global" ? 300 : 5))
                }
            }
        }
    }

    // MARK: Presence

    @Test("room:presence on join, leave and disconnect lists exactly the users with a socket in the room")
    func presenceOnJoinLeaveDisconnect() async throws {
        try await TwoNodeCluster.with { cluster in
            let alice = try await cluster.register("alice")
            let bob = try await cluster.register("bob")
            let carol = try await cluster.register("carol")
            let room = try await cluster.createRoom(by: alice, with: [bob, carol])
            let aliceSocket = try await cluster.connect(alice, to: cluster.node1)
            let bobSocket = try await cluster.connect(bob, to: cluster.node2)
            let bobSecond = try await cluster.connect(bob, to: cluster.node1)
            let carolSocket = try await cluster.connect(carol, to: cluster.node2)

            // The joiner gets its elements:batch, then its own room:presence, after the batch's offset.
            let batch = try await Self.join(aliceSocket, room)
            let first = try await Self.expectPresence(aliceSocket, room, [alice])
            #expect(try #require(StreamOffset(first["offset"].stringValue ?? "")) > (try #require(StreamOffset(batch["offset"].stringValue ?? ""))))

            _ = try await Self.join(bobSocket, room)
            for socket in [aliceSocket, bobSocket] { try await Self.expectPresence(socket, room, [alice, bob]) }
            // Bob's second device changes nobody's presence: the room gets no event, but the
            // joining device alone is told who is present.
            _ = try await Self.join(bobSecond, room)
            try await Self.expectPresence(bobSecond, room, [alice, bob])
            try await aliceSocket.expectNoEvent("room:presence", within: .milliseconds(300))
            try await bobSocket.expectNoEvent("room:presence", within: .milliseconds(5))
            // Carol is connected but has not joined: room events do not reach her.
            try await carolSocket.expectNoEvent("room:presence", within: .milliseconds(5))
            _ = try await Self.join(carolSocket, room)
            for socket in [aliceSocket, bobSocket, bobSecond, carolSocket] { try await Self.expectPresence(socket, room, [alice, bob, carol]) }

            // Bob leaves on one device: still present.
            #expect(try await bobSocket.emitWithAck("room:leave", ["roomId": .string(room)]) == ["data": ["roomId": .string(room)]])
            try await aliceSocket.expectNoEvent("room:presence", within: .milliseconds(300))
            // His other device disconnects: gone.
            _ = try await bobSecond.close()
            for socket in [aliceSocket, carolSocket] { try await Self.expectPresence(socket, room, [alice, carol]) }
            // The socket that left gets no more room events.
            try await bobSocket.expectNoEvent("room:presence", within: .milliseconds(100))

            // Carol leaves: Alice alone.
            _ = try await carolSocket.emitWithAck("room:leave", ["roomId": .string(room)])
            try await Self.expectPresence(aliceSocket, room, [alice])
            // Bob comes back on node 2.
            _ = try await Self.join(bobSocket, room)
            for socket in [aliceSocket, bobSocket] { try await Self.expectPresence(socket, room, [alice, bob]) }
            // Alice disconnects: Bob sees only himself; then Bob leaves and the room is empty.
            _ = try await aliceSocket.close()
            try await Self.expectPresence(bobSocket, room, [bob])
            _ = try await bobSocket.emitWithAck("room:leave", ["roomId": .string(room)])
            #expect(
                try await eventually {
                    try await cluster.withRedis { try await $0.send(RedisCommand("ZCARD", "room:{\(room)}:presence"), as: Int.self) } == 0
                }
            )
            // The last announcement says so (read from the stream: nobody is left to receive it).
            let last = try await cluster.withRedis { redis in
                try await redis.send("XREVRANGE", "room:{\(room)}:stream", "+", "-", "COUNT", 1)
            }
            guard case .array(let entries) = last, case .array(let entry)? = entries.first, entry.count == 2 else {
                Issue.record("no stream entry: \(last)")
                return
            }
            #expect(entry[1].fields["p"]?.contains(#""isActive":false,"activeUserIds":[]"#) == true, "\(entry[1].fields)")
        }
    }

    @Test("leaving and re-joining in quick succession leaves the socket present, and kept present by its node")
    func rapidLeaveAndJoin() async throws {
        try await TwoNodeCluster.with(environment: ["ROOMCAST_PRESENCE_BACKSTOP_MS": "600"]) { cluster in
            let alice = try await cluster.register("alice")
            let bob = try await cluster.register("bob")
            let room = try await cluster.createRoom(by: alice, with: [bob])
            let aliceSocket = try await cluster.connect(alice, to: cluster.node1)
            let bobSocket = try await cluster.connect(bob, to: cluster.node2)
            _ = try await Self.join(aliceSocket, room)
            _ = try await Self.join(bobSocket, room)
            for _ in 0..<25 {
                try await bobSocket.emit("room:leave", ["roomId": .string(room)])
                _ = try await Self.join(bobSocket, room)
            }
            // Well past a lifetime: Bob's socket is still present, and the last word Alice got says so.
            // The sleep only makes sure a lifetime passed; the state is then polled, as a loaded
            // machine can stall a 200 ms refresh long enough for a member to lapse and be restored
            // by its node's next refresh. A socket its node forgot never comes back.
            try await Task.sleep(for: .milliseconds(1_500))
            let both = JSONValue.array([alice.id, bob.id].sorted().map(JSONValue.string))
            let settled = try await eventually {
                let members = try await cluster.withRedis { redis in
                    try await redis.send(RedisCommand("ZRANGE", "room:{\(room)}:presence", 0, -1), as: [String].self)
                }
                let announced = await aliceSocket.events(named: "room:presence")
                guard let last = announced.last else { return false }
                let lastUsers = try JSONValue(last)["activeUserIds"]
                return members.filter { $0.hasPrefix(bob.id + "|") }.count == 1 && lastUsers == both
            }
            let members = try await cluster.withRedis { redis in
                try await redis.send(RedisCommand("ZRANGE", "room:{\(room)}:presence", 0, -1), as: [String].self)
            }
            let announced = await aliceSocket.events(named: "room:presence")
            #expect(settled, "members \(members); last announced \(announced.suffix(3))")
        }
    }

    @Test("a crashed node's users leave presence: once its registry entry expires the other node reaps them and its sockets get room:presence without them")
    func crashedNodePresenceExpires() async throws {
        // Members live as long as their node (the presence backstop is its default, an hour):
        // a 4 s node TTL, beaten every 1.3 s, so that a loaded machine may stall a node for over
        // two seconds without its lease lapsing, which the quiet window below would report.
        try await TwoNodeCluster.with(environment: ["ROOMCAST_NODE_TTL_MS": "4000"]) { cluster in
            let (alice, bob, room, aliceSocket, bobSocket, node2) = try await Self.presentOnBothNodes(cluster)
            // Heartbeats keep both present well past one node TTL.
            try await aliceSocket.expectNoEvent("room:presence", within: .milliseconds(6_000))
            // Node 2 indexed where it put members: the room, and Bob for his socket count.
            let index = try await cluster.withRedis { redis in try await NodeIndex(redis: redis, node: node2, lifetime: .seconds(1)).entries() }
            #expect(index.rooms.map(\.rawValue) == [room])
            #expect(index.users.map(\.rawValue) == [bob.id])

            cluster.node2.process.signal(SIGKILL)
            // About one node TTL plus one heartbeat interval of node 1 (5.3 s) on a quiet machine.
            // The patience is no speed bound: it only has to be far below the members' backstop
            // (an hour), which is what a node that did not reap would wait for.
            try await Self.expectPresence(aliceSocket, room, [alice], timeout: .seconds(90))
            // Bob's socket no longer counts, and node 2 is out of the registry with its index.
            #expect(try await eventually(within: .seconds(30)) {
                try await cluster.withRedis { redis in
                    let sockets = try await redis.send(RedisCommand("ZCARD", RedisKeys.userSockets(UserID(bob.id)!)), as: Int.self)
                    let entry = try await redis.send(RedisCommand("ZSCORE", RedisKeys.nodeRegistry, node2.rawValue))
                    let indexed = try await redis.send(RedisCommand("EXISTS", RedisKeys.nodeRooms(node2), RedisKeys.nodeUsers(node2)), as: Int.self)
                    return sockets == 0 && entry.isNull && indexed == 0
                }
            })
            // Bob, now away, counts unseen elements again.
            _ = try await Self.create(aliceSocket, room)
            #expect(try await cluster.withRedis { try await $0.send("HGET", "room:{\(room)}:unseen", bob.id) }.string == "1")
            _ = bobSocket
        }
    }

    @Test("a node whose lease lapsed while it was alive (reaped by another node) puts back its sockets' presence, counts and index")
    func reapedWhileAliveRestores() async throws {
        try await TwoNodeCluster.with(environment: ["ROOMCAST_NODE_TTL_MS": "3000"]) { cluster in
            let (alice, bob, room, aliceSocket, bobSocket, node2) = try await Self.presentOnBothNodes(cluster)
            let bobID = try #require(UserID(bob.id))
            // Node 2 "paused" past its TTL: its hash goes, and a reaper takes its members. Until one
            // reap finds the hash gone before node 2 beats again (each beat writes it back).
            let reaped = try await eventually(within: .seconds(30)) {
                try await cluster.withRedis { redis in
                    _ = try await redis.send(RedisCommand("DEL", RedisKeys.node(node2)))
                    let reaper = NodeReaper(redis: redis, presence: PresenceStore(redis: redis), sockets: UserSocketStore(redis: redis))
                    return try await reaper.reap([node2]).members > 0
                }
            }
            #expect(reaped)
            try await Self.expectPresence(aliceSocket, room, [alice], timeout: .seconds(30))
            // Its next heartbeat finds its lease lapsed: it puts back Bob's member (announced), his
            // socket count and its index.
            try await Self.expectPresence(aliceSocket, room, [alice, bob], timeout: .seconds(30))
            #expect(try await eventually(within: .seconds(30)) {
                try await cluster.withRedis { redis in
                    let sockets = try await redis.send(RedisCommand("ZCARD", RedisKeys.userSockets(bobID)), as: Int.self)
                    let index = try await NodeIndex(redis: redis, node: node2, lifetime: .seconds(1)).entries()
                    return sockets == 1 && index.rooms.map(\.rawValue) == [room] && index.users == [bobID]
                }
            })
            _ = bobSocket
        }
    }

    /// Alice on node 1 and Bob on node 2 in one room, each seen present by Alice's socket; and
    /// node 2's id in the registry.
    private static func presentOnBothNodes(
        _ cluster: TwoNodeCluster
    ) async throws -> (alice: TestUser, bob: TestUser, room: String, aliceSocket: SocketIOTestClient, bobSocket: SocketIOTestClient, node2: NodeID) {
        let alice = try await cluster.register("alice")
        let bob = try await cluster.register("bob")
        let room = try await cluster.createRoom(by: alice, with: [bob])
        let aliceSocket = try await cluster.connect(alice, to: cluster.node1)
        let bobSocket = try await cluster.connect(bob, to: cluster.node2)
        _ = try await join(aliceSocket, room)
        try await expectPresence(aliceSocket, room, [alice])
        _ = try await join(bobSocket, room)
        try await expectPresence(aliceSocket, room, [alice, bob])
        let node2 = try #require(try await cluster.withRedis { redis in
            try await NodeRegistry(redis: redis).liveNodes().first { $0.address.hasSuffix(":\(cluster.node2.port)") }?.id
        })
        return (alice, bob, room, aliceSocket, bobSocket, node2)
    }
}

extension JSONValue {
    /// The member names of an object (empty for anything else).
    fileprivate var keys: Set<String> { Set(objectValue.map { Array($0.keys) } ?? []) }
}
