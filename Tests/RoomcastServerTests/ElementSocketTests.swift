import Foundation
import NIOCore
import RedisClient
import RoomcastCore
import RoomcastTestSupport
import Testing

/// Elements and z-order over Socket.IO and REST on two nodes sharing one Redis: the element events
/// of docs/clients/events.md, payload by payload.
@Suite("Elements over Socket.IO and REST: two nodes on one Redis", .serialized)
struct ElementSocketTests {
    static let elementEvents = [
        "element:created", "element:updated", "element:transformed", "element:z-index-changed", "element:deleted", "room:cleared",
        "elements:batch",
    ]

    /// Every member an element has when it has no optional field (those come on top).
    static let elementKeys: Set<String> = [
        "id", "roomId", "type", "positionX", "positionY", "width", "height", "rotation", "scaleX", "scaleY", "zIndex",
        "createdBy", "createdAt", "creator", "reactions",
    ]

    static func note(x: Double = 10, y: Double = 20, content: String = "hello") -> JSONValue {
        ["type": "note", "positionX": .number(x), "positionY": .number(y), "width": 100, "height": 80, "content": .string(content)]
    }

    /// Joins and returns the `elements:batch` that follows.
    ///
    /// The batch's offset is the room's last event before the join: the join's own
    /// `room:presence` comes after it. Use ``joinQuietly`` to check it when nothing else happens.
    static func join(_ socket: SocketIOTestClient, _ room: String) async throws -> JSONValue {
        let ack = try await socket.emitWithAck("room:join", ["roomId": .string(room)])
        #expect(ack == ["data": ["roomId": .string(room), "recovered": false]])
        let batch = try JSONValue(try await socket.nextEvent("elements:batch"))
        #expect(batch["roomId"].stringValue == room)
        #expect(Set(batch.objectValue.map { Array($0.keys) } ?? []) == ["roomId", "elements", "offset"])
        return batch
    }

    /// Joins a room in which nothing else happens meanwhile: the batch's offset must be the
    /// stream's last entry before the join (`0-0` when there is none).
    static func joinQuietly(_ cluster: TwoNodeCluster, _ socket: SocketIOTestClient, _ room: String, sourceLocation: SourceLocation = #_sourceLocation) async throws -> JSONValue {
        let before = try await lastOffset(cluster, room)
        let batch = try await join(socket, room)
        let after = try await lastOffset(cluster, room)
        // The snapshot's offset is the stream's last one when it was read: another event (a
        // presence expiry on a loaded machine) may come between the reads, never outside them.
        let offset = batch["offset"].stringValue.map(Self.offsetKey)
        #expect(offset.map { Self.offsetKey(before) <= $0 && $0 <= Self.offsetKey(after) } == true, "batch \(batch), stream \(before)…\(after)", sourceLocation: sourceLocation)
        return batch
    }

    /// A stream offset (`<ms>-<seq>`) as a pair that compares in stream order.
    static func offsetKey(_ offset: String) -> (Int, Int) {
        let parts = offset.split(separator: "-").map { Int($0) ?? 0 }
        return (parts.first ?? 0, parts.count > 1 ? parts[1] : 0)
    }

    /// Creates an element over the socket and returns it (from the ack).
    static func create(_ socket: SocketIOTestClient, _ room: String, _ element: JSONValue = note()) async throws -> JSONValue {
        let ack = try await socket.emitWithAck("element:create", ["roomId": .string(room), "element": element])
        #expect(ack.objectValue?.keys.sorted() == ["data"], "\(ack)")
        #expect(ack["data"].objectValue?.keys.sorted() == ["element"], "\(ack)")
        return ack["data"]["element"]
    }

    static func offset(_ value: JSONValue) throws -> StreamOffset {
        try #require(value["offset"].stringValue.flatMap { StreamOffset($0) }, "no offset in \(value)")
    }

    /// The room stream's last entry id, `0-0` when empty.
    static func lastOffset(_ cluster: TwoNodeCluster, _ room: String) async throws -> String {
        try await cluster.withRedis { redis in
            let reply = try await redis.send("XREVRANGE", "room:{\(room)}:stream", "+", "-", "COUNT", 1)
            guard case .array(let entries) = reply, case .array(let first)? = entries.first, let id = first.first?.string else { return "0-0" }
            return id
        }
    }

    /// Ids of the stream entries after `offset` that are `event` events.
    static func streamIDs(_ cluster: TwoNodeCluster, _ room: String, after offset: String, of event: String) async throws -> [String] {
        try await cluster.withRedis { redis in
            let reply = try await redis.send("XRANGE", "room:{\(room)}:stream", "(" + offset, "+")
            guard case .array(let entries) = reply else { return [] }
            return entries.compactMap { entry in
                guard case .array(let pair) = entry, let id = pair.first?.string, pair.count == 2 else { return nil }
                return pair[1].fields["p"]?.hasPrefix("42[\"\(event)\",") == true ? id : nil
            }
        }
    }

    // MARK: REST

    struct Response {
        var status: Int
        var json: JSONValue
    }

    static func rest(
        _ method: String, _ path: String, as user: TestUser?, body: String? = nil, on node: GatewayProcess
    ) async throws -> Response {
        var headers: [String: String] = [:]
        if let user { headers["Authorization"] = "Bearer \(user.token)" }
        if body != nil { headers["Content-Type"] = "application/json" }
        let response = try await HTTPTestClient.request(method, port: node.port, path: path, headers: headers, body: body.map { Data($0.utf8) })
        return Response(status: response.status, json: response.text.isEmpty ? .null : try JSONValue(response.text))
    }

    static func elements(_ cluster: TwoNodeCluster, _ room: String, as user: TestUser, on node: GatewayProcess? = nil) async throws -> [JSONValue] {
        let response = try await rest("GET", "/api/rooms/\(room)/elements", as: user, on: node ?? cluster.node1)
        #expect(response.status == 200, "\(response.json)")
        return try #require(response.json["data"].arrayValue, "\(response.json)")
    }

    static func elementCount(_ cluster: TwoNodeCluster, _ room: String, as user: TestUser, on node: GatewayProcess? = nil) async throws -> Int? {
        let response = try await rest("GET", "/api/rooms/\(room)", as: user, on: node ?? cluster.node2)
        #expect(response.status == 200, "\(response.json)")
        return response.json["data"]["elementCount"].intValue
    }

    // MARK: Socket events, payload by payload

    @Test("every element event crosses the nodes with the contract's exact payloads and acks")
    func socketEvents() async throws {
        try await TwoNodeCluster.with { cluster in
            let alice = try await cluster.register("alice")
            let bob = try await cluster.register("bob")
            let room = try await cluster.createRoom(by: alice, with: [bob])
            let aliceSocket = try await cluster.connect(alice, to: cluster.node1)
            let bobSocket = try await cluster.connect(bob, to: cluster.node2)
            let aliceBatch = try await Self.joinQuietly(cluster, aliceSocket, room)
            #expect(aliceBatch == ["roomId": .string(room), "elements": [], "offset": "0-0"])
            #expect(try await Self.joinQuietly(cluster, bobSocket, room)["elements"] == [])

            // element:create → ack {data: {element}}; element:created {roomId, element, offset} to both.
            let first = try await Self.create(aliceSocket, room, Self.note(x: 1.5, y: -2, content: "first"))
            #expect(Set(first.objectValue.map { Array($0.keys) } ?? []) == Self.elementKeys.union(["content"]))
            #expect(first["roomId"].stringValue == room)
            #expect(first["type"] == "note")
            #expect(first["positionX"] == 1.5)
            #expect(first["positionY"] == -2)
            #expect(first["width"] == 100)
            #expect(first["height"] == 80)
            #expect(first["rotation"] == 0)
            #expect(first["scaleX"] == 1)
            #expect(first["scaleY"] == 1)
            #expect(first["content"] == "first")
            #expect(first["zIndex"] == 1)
            #expect(first["createdBy"].stringValue == alice.id)
            #expect(first["creator"]["id"].stringValue == alice.id)
            #expect(first["creator"]["username"] == "alice")
            #expect(first["reactions"] == .null)
            #expect(first["createdAt"].stringValue?.wholeMatch(of: /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/) != nil)
            let firstID = try #require(first["id"].stringValue)
            let created = try JSONValue(try await bobSocket.nextEvent("element:created"))
            let createdOffset = try Self.offset(created)
            #expect(created == ["roomId": .string(room), "element": first, "offset": .string(createdOffset.description)])
            #expect(try JSONValue(try await aliceSocket.nextEvent("element:created")) == created)
            #expect(try await Self.elementCount(cluster, room, as: bob) == 1)

            // element:update without a move: updates carry the fields only.
            let updateAck = try await bobSocket.emitWithAck(
                "element:update", ["roomId": .string(room), "elementId": .string(firstID), "updates": ["content": "edited", "width": 120]]
            )
            var updated = try JSONValue(try await aliceSocket.nextEvent("element:updated"))
            var offset = try Self.offset(updated)
            #expect(offset > createdOffset)
            #expect(
                updated == [
                    "roomId": .string(room), "elementId": .string(firstID), "updates": ["content": "edited", "width": 120],
                    "offset": .string(offset.description),
                ]
            )
            // The ack says what changed, exactly as the room's event does (offset included).
            #expect(updateAck["data"] == updated)
            let stored = try await Self.elements(cluster, room, as: alice).first { $0["id"].stringValue == firstID }
            #expect(stored?["content"] == "edited" && stored?["width"] == 120 && stored?["zIndex"] == 1)
            #expect(try JSONValue(try await bobSocket.nextEvent("element:updated")) == updated)

            // A second element goes on top.
            let second = try await Self.create(bobSocket, room, ["type": "photo", "positionX": 0, "positionY": 0, "width": 10, "height": 10, "imageUrl": "https://cdn.example.com/p.jpg"])
            #expect(second["zIndex"] == 2)
            #expect(second["imageUrl"] == "https://cdn.example.com/p.jpg")
            #expect(second["content"] == .null)
            #expect(second.objectValue?.keys.contains("content") == false)
            #expect(second["creator"]["username"] == "bob")
            let secondID = try #require(second["id"].stringValue)
            #expect(try JSONValue(try await aliceSocket.nextEvent("element:created"))["element"] == second)
            _ = try await bobSocket.nextEvent("element:created")

            // A move brings the element to front: updates.zIndex is the new zIndex.
            let moveAck = try await bobSocket.emitWithAck(
                "element:update", ["roomId": .string(room), "elementId": .string(firstID), "updates": ["positionX": 300]]
            )
            updated = try JSONValue(try await aliceSocket.nextEvent("element:updated"))
            offset = try Self.offset(updated)
            #expect(
                updated == [
                    "roomId": .string(room), "elementId": .string(firstID), "updates": ["positionX": 300, "zIndex": 3],
                    "offset": .string(offset.description),
                ]
            )
            #expect(moveAck["data"] == updated)
            #expect(try JSONValue(try await bobSocket.nextEvent("element:updated")) == updated)
            // Moved again while on top: no zIndex.
            _ = try await aliceSocket.emitWithAck("element:update", ["roomId": .string(room), "elementId": .string(firstID), "updates": ["positionY": 42]])
            updated = try JSONValue(try await bobSocket.nextEvent("element:updated"))
            #expect(updated["updates"] == ["positionY": 42])
            _ = try await aliceSocket.nextEvent("element:updated")

            // element:transform → element:transformed {roomId, element, offset}, on top.
            let transformAck = try await bobSocket.emitWithAck(
                "element:transform",
                ["roomId": .string(room), "elementId": .string(secondID), "scaleX": 2, "scaleY": 2.5, "rotation": 15, "width": 11, "height": 12, "positionX": 5, "positionY": 6]
            )
            let transformed = transformAck["data"]["element"]
            #expect(transformAck["data"].objectValue?.keys.sorted() == ["element"])
            #expect(transformed["zIndex"] == 4)
            #expect(transformed["scaleX"] == 2)
            #expect(transformed["scaleY"] == 2.5)
            #expect(transformed["rotation"] == 15)
            #expect(transformed["width"] == 11)
            #expect(transformed["height"] == 12)
            #expect(transformed["positionX"] == 5)
            #expect(transformed["positionY"] == 6)
            #expect(transformed["imageUrl"] == "https://cdn.example.com/p.jpg")
            let transformedEvent = try JSONValue(try await aliceSocket.nextEvent("element:transformed"))
            #expect(
                transformedEvent == ["roomId": .string(room), "element": transformed, "offset": .string(try Self.offset(transformedEvent).description)]
            )
            #expect(try JSONValue(try await bobSocket.nextEvent("element:transformed")) == transformedEvent)

            // element:bring-to-front → ack {data: {elementId, zIndex}}; element:z-index-changed.
            let frontAck = try await aliceSocket.emitWithAck("element:bring-to-front", ["roomId": .string(room), "elementId": .string(firstID)])
            #expect(frontAck == ["data": ["elementId": .string(firstID), "zIndex": 5]])
            let zChanged = try JSONValue(try await bobSocket.nextEvent("element:z-index-changed"))
            #expect(zChanged == ["roomId": .string(room), "elementId": .string(firstID), "zIndex": 5, "offset": .string(try Self.offset(zChanged).description)])
            #expect(try JSONValue(try await aliceSocket.nextEvent("element:z-index-changed")) == zChanged)
            // Already on top: same ack, no event for anyone.
            let again = try await bobSocket.emitWithAck("element:bring-to-front", ["roomId": .string(room), "elementId": .string(firstID)])
            #expect(again == ["data": ["elementId": .string(firstID), "zIndex": 5]])
            // Fenced: every room event up to a later message has arrived, whatever the machine's speed.
            try await Fence.message(in: room, from: bobSocket, reaching: [aliceSocket, bobSocket])
            try await aliceSocket.expectNoEvent("element:z-index-changed", within: .milliseconds(300))
            try await bobSocket.expectNoEvent("element:z-index-changed", within: .milliseconds(50))

            // REST sees the same stack.
            let stack = try await Self.elements(cluster, room, as: bob, on: cluster.node2)
            #expect(stack.map { $0["id"].stringValue } == [secondID, firstID])
            #expect(stack.map(\.["zIndex"]) == [4, 5])
            #expect(stack[0] == transformed)
            #expect(stack[1]["positionY"] == 42)

            // element:delete → ack {data: {elementId}}; element:deleted {roomId, elementId, offset}.
            let deleteAck = try await bobSocket.emitWithAck("element:delete", ["roomId": .string(room), "elementId": .string(secondID)])
            #expect(deleteAck == ["data": ["elementId": .string(secondID)]])
            let deleted = try JSONValue(try await aliceSocket.nextEvent("element:deleted"))
            #expect(deleted == ["roomId": .string(room), "elementId": .string(secondID), "offset": .string(try Self.offset(deleted).description)])
            #expect(try JSONValue(try await bobSocket.nextEvent("element:deleted")) == deleted)
            #expect(try await Self.elementCount(cluster, room, as: alice) == 1)

            // room:clear → ack {data: {roomId}}; room:cleared {roomId, offset}.
            _ = try await Self.create(bobSocket, room)
            let clearAck = try await aliceSocket.emitWithAck("room:clear", ["roomId": .string(room)])
            #expect(clearAck == ["data": ["roomId": .string(room)]])
            let cleared = try JSONValue(try await bobSocket.nextEvent("room:cleared"))
            let clearedOffset = try Self.offset(cleared)
            #expect(cleared == ["roomId": .string(room), "offset": .string(clearedOffset.description)])
            #expect(try JSONValue(try await aliceSocket.nextEvent("room:cleared")) == cleared)
            #expect(try await Self.elements(cluster, room, as: alice).isEmpty)
            #expect(try await Self.elementCount(cluster, room, as: alice) == 0)
            #expect(try await Self.lastOffset(cluster, room) == clearedOffset.description)

            // Each socket got each of the 10 events once, each with its own offset.
            for socket in [aliceSocket, bobSocket] {
                var all: [StreamOffset] = []
                for name in Self.elementEvents where name != "elements:batch" {
                    for payload in await socket.events(named: name) { all.append(try Self.offset(try JSONValue(payload))) }
                }
                #expect(Set(all).count == all.count)
                #expect(all.count == 10)
            }
        }
    }

    // MARK: REST

    @Test("REST lists, creates, patches and deletes elements, emitting the same socket events")
    func restEndpoints() async throws {
        try await TwoNodeCluster.with { cluster in
            let alice = try await cluster.register("alice")
            let bob = try await cluster.register("bob")
            let room = try await cluster.createRoom(by: alice, with: [bob])
            let aliceSocket = try await cluster.connect(alice, to: cluster.node1)
            let bobSocket = try await cluster.connect(bob, to: cluster.node2)
            _ = try await Self.join(aliceSocket, room)
            _ = try await Self.join(bobSocket, room)
            let base = "/api/rooms/\(room)/elements"

            let empty = try await Self.rest("GET", base, as: alice, on: cluster.node2)
            #expect(empty.status == 200)
            #expect(empty.json == ["data": []])

            // POST → 201 {data: element}; the sockets get element:created with the same element.
            let posted = try await Self.rest(
                "POST", base, as: bob, body: #"{"type":"sticker","positionX":3,"positionY":4,"width":50,"height":50,"stickerText":"hi ✨","rotation":10}"#,
                on: cluster.node1
            )
            #expect(posted.status == 201, "\(posted.json)")
            let element = posted.json["data"]
            #expect(posted.json.objectValue?.keys.sorted() == ["data"])
            #expect(Set(element.objectValue.map { Array($0.keys) } ?? []) == Self.elementKeys.union(["stickerText"]))
            #expect(element["type"] == "sticker")
            #expect(element["stickerText"] == "hi ✨")
            #expect(element["rotation"] == 10)
            #expect(element["scaleX"] == 1)
            #expect(element["zIndex"] == 1)
            #expect(element["createdBy"].stringValue == bob.id)
            #expect(element["creator"]["username"] == "bob")
            let id = try #require(element["id"].stringValue)
            for socket in [aliceSocket, bobSocket] {
                let event = try JSONValue(try await socket.nextEvent("element:created"))
                #expect(event == ["roomId": .string(room), "element": element, "offset": .string(try Self.offset(event).description)])
            }
            let other = try await Self.rest("POST", base, as: alice, body: #"{"type":"note","positionX":0,"positionY":0,"width":1,"height":1}"#, on: cluster.node2)
            #expect(other.status == 201)
            let otherID = try #require(other.json["data"]["id"].stringValue)
            #expect(other.json["data"]["zIndex"] == 2)
            _ = try await aliceSocket.nextEvent("element:created")
            _ = try await bobSocket.nextEvent("element:created")

            // PATCH → {data: element}; element:updated; a move carries zIndex.
            let patched = try await Self.rest("PATCH", "\(base)/\(id)", as: alice, body: #"{"stickerText":"bye"}"#, on: cluster.node2)
            #expect(patched.status == 200, "\(patched.json)")
            #expect(patched.json["data"]["stickerText"] == "bye")
            #expect(patched.json["data"]["zIndex"] == 1)
            #expect(patched.json["data"]["id"].stringValue == id)
            var event = try JSONValue(try await bobSocket.nextEvent("element:updated"))
            #expect(event == ["roomId": .string(room), "elementId": .string(id), "updates": ["stickerText": "bye"], "offset": .string(try Self.offset(event).description)])
            _ = try await aliceSocket.nextEvent("element:updated")
            let moved = try await Self.rest("PATCH", "\(base)/\(id)", as: bob, body: #"{"positionX":-40.25,"positionY":7}"#, on: cluster.node1)
            #expect(moved.status == 200)
            #expect(moved.json["data"]["zIndex"] == 3)
            #expect(moved.json["data"]["positionX"] == -40.25)
            event = try JSONValue(try await aliceSocket.nextEvent("element:updated"))
            #expect(event["updates"] == ["positionX": -40.25, "positionY": 7, "zIndex": 3])
            _ = try await bobSocket.nextEvent("element:updated")

            // GET: zIndex ascending, the same elements the events described.
            let listed = try await Self.elements(cluster, room, as: bob, on: cluster.node2)
            #expect(listed.map { $0["id"].stringValue } == [otherID, id])
            #expect(listed[1] == moved.json["data"])
            #expect(try await Self.elementCount(cluster, room, as: bob) == 2)

            // DELETE → {data: {elementId}}; element:deleted.
            let deleted = try await Self.rest("DELETE", "\(base)/\(id)", as: alice, on: cluster.node1)
            #expect(deleted.status == 200)
            #expect(deleted.json == ["data": ["elementId": .string(id)]])
            event = try JSONValue(try await bobSocket.nextEvent("element:deleted"))
            #expect(event == ["roomId": .string(room), "elementId": .string(id), "offset": .string(try Self.offset(event).description)])
            #expect(try await Self.elementCount(cluster, room, as: bob) == 1)
            #expect(try await Self.elements(cluster, room, as: alice).map { $0["id"].stringValue } == [otherID])

            // Errors.
            func expectError(_ response: Response, _ status: Int, _ code: String, naming field: String? = nil, sourceLocation: SourceLocation = #_sourceLocation) {
                #expect(response.status == status, "\(response.json)", sourceLocation: sourceLocation)
                #expect(response.json["error"]["code"].stringValue == code, "\(response.json)", sourceLocation: sourceLocation)
                if let field {
                    #expect(response.json["error"]["message"].stringValue?.contains(field) == true, "\(response.json)", sourceLocation: sourceLocation)
                }
            }
            expectError(try await Self.rest("DELETE", "\(base)/\(id)", as: alice, on: cluster.node1), 404, "not_found")
            expectError(try await Self.rest("PATCH", "\(base)/\(id)", as: alice, body: #"{"content":"x"}"#, on: cluster.node1), 404, "not_found")
            expectError(try await Self.rest("PATCH", "\(base)/nope", as: alice, body: #"{"content":"x"}"#, on: cluster.node1), 404, "not_found")
            expectError(try await Self.rest("GET", "/api/rooms/doesnotexist/elements", as: alice, on: cluster.node1), 404, "not_found")
            expectError(try await Self.rest("POST", "/api/rooms/doesnotexist/elements", as: alice, body: #"{"type":"note","positionX":0,"positionY":0,"width":1,"height":1}"#, on: cluster.node1), 404, "not_found")
            expectError(try await Self.rest("POST", base, as: alice, body: #"{"type":"note","positionX":0,"positionY":0,"width":1,"height":1,"colour":"red"}"#, on: cluster.node1), 400, "invalid_payload", naming: "colour")
            expectError(try await Self.rest("POST", base, as: alice, body: #"{"type":"chart","positionX":0,"positionY":0,"width":1,"height":1}"#, on: cluster.node1), 400, "invalid_payload", naming: "type")
            expectError(try await Self.rest("POST", base, as: alice, body: #"{"type":"note","positionX":0,"positionY":0,"height":1}"#, on: cluster.node1), 400, "invalid_payload", naming: "width")
            expectError(try await Self.rest("POST", base, as: alice, body: #"{"type":"note","positionX":"0","positionY":0,"width":1,"height":1}"#, on: cluster.node1), 400, "invalid_payload", naming: "positionX")
            expectError(try await Self.rest("POST", base, as: alice, body: #"{"type":"note","positionX":0,"positionY":0,"width":0,"height":1}"#, on: cluster.node1), 400, "invalid_payload", naming: "width")
            expectError(try await Self.rest("POST", base, as: alice, body: "[]", on: cluster.node1), 400, "invalid_payload")
            expectError(try await Self.rest("POST", base, as: alice, body: "{", on: cluster.node1), 400, "invalid_payload")
            let emptyPatch = try await Self.rest("PATCH", "\(base)/\(otherID)", as: alice, body: "{}", on: cluster.node1)
            expectError(emptyPatch, 400, "invalid_payload")
            #expect(emptyPatch.json["error"]["message"].stringValue?.contains("not valid JSON") == false, "\(emptyPatch.json)")
            expectError(try await Self.rest("PATCH", "\(base)/\(otherID)", as: alice, body: #"{"type":"photo"}"#, on: cluster.node1), 400, "invalid_payload", naming: "type")
            expectError(try await Self.rest("PATCH", "\(base)/\(otherID)", as: alice, body: #"{"zIndex":99}"#, on: cluster.node1), 400, "invalid_payload", naming: "zIndex")
            expectError(try await Self.rest("GET", base, as: nil, on: cluster.node1), 401, "unauthorized")
            expectError(try await Self.rest("POST", base, as: nil, body: #"{"type":"note","positionX":0,"positionY":0,"width":1,"height":1}"#, on: cluster.node1), 401, "unauthorized")
            // Nothing of that reached the sockets or the stack (fenced: every room event up to a
            // later message has arrived, whatever the machine's speed).
            try await Fence.message(in: room, from: aliceSocket, reaching: [bobSocket])
            try await bobSocket.expectNoEvent("element:created", within: .milliseconds(300))
            try await bobSocket.expectNoEvent("element:updated", within: .milliseconds(10))
            #expect(try await Self.elements(cluster, room, as: alice).map { $0["zIndex"] } == [2])
        }
    }

    // MARK: elements:batch

    @Test("joining sends elements:batch: zIndex ascending, the last event's offset, REST-made elements included")
    func batchOnJoin() async throws {
        try await TwoNodeCluster.with { cluster in
            let alice = try await cluster.register("alice")
            let bob = try await cluster.register("bob")
            let room = try await cluster.createRoom(by: alice, with: [bob])
            let base = "/api/rooms/\(room)/elements"

            // An empty room with a chat message: no elements, the message's offset.
            let chatter = try await cluster.connect(alice, to: cluster.node1)
            let sent = try await chatter.emitWithAck("message:send", ["roomId": .string(room), "text": "before any element"])
            #expect(sent["data"]["message"]["text"] == "before any element")
            let early = try await Self.joinQuietly(cluster, try await cluster.connect(bob, to: cluster.node2), room)
            #expect(early["elements"] == [])
            #expect(early["offset"] != "0-0")

            // Elements made over REST (no socket joined on node 1) before Bob's next join.
            var ids: [String] = []
            for (index, type) in ["note", "photo", "video"].enumerated() {
                let response = try await Self.rest(
                    "POST", base, as: index == 1 ? bob : alice,
                    body: #"{"type":"\#(type)","positionX":\#(index),"positionY":0,"width":10,"height":10}"#, on: cluster.node1
                )
                #expect(response.status == 201)
                ids.append(try #require(response.json["data"]["id"].stringValue))
            }
            // Reorder: the first goes to the top by a move, the second by bring-to-front.
            #expect(try await Self.rest("PATCH", "\(base)/\(ids[0])", as: alice, body: #"{"positionY":9}"#, on: cluster.node2).status == 200)
            #expect(try await chatter.emitWithAck("element:bring-to-front", ["roomId": .string(room), "elementId": .string(ids[1])])["data"]["zIndex"] == 5)

            let bobSocket = try await cluster.connect(bob, to: cluster.node2)
            let batch = try await Self.joinQuietly(cluster, bobSocket, room)
            let elements = try #require(batch["elements"].arrayValue)
            #expect(elements.map { $0["id"].stringValue } == [ids[2], ids[0], ids[1]])
            #expect(elements.map(\.["zIndex"]) == [3, 4, 5])
            #expect(elements.map(\.["type"]) == ["video", "note", "photo"])
            #expect(elements[1]["positionY"] == 9)
            #expect(elements == (try await Self.elements(cluster, room, as: bob)))
            #expect(elements.allSatisfy { $0["reactions"] == .null && $0["creator"]["id"].stringValue != nil })

            // Alice joins on node 1 too and gets the same elements.
            #expect(try await Self.joinQuietly(cluster, chatter, room)["elements"] == batch["elements"])
            // Joining again sends a fresh batch.
            #expect(try await Self.joinQuietly(cluster, bobSocket, room)["elements"] == batch["elements"])
            // Only the joining socket gets a batch.
            try await chatter.expectNoEvent("elements:batch", within: .milliseconds(300))

            // After the join, events continue with larger offsets.
            _ = try await Self.create(chatter, room)
            let created = try JSONValue(try await bobSocket.nextEvent("element:created"))
            #expect(try Self.offset(created) > (try #require(StreamOffset(batch["offset"].stringValue ?? ""))))
            #expect(created["element"]["zIndex"] == 6)

            // Leaving stops the events; a join after a clear sends an empty batch at the clear's offset.
            _ = try await bobSocket.emitWithAck("room:leave", ["roomId": .string(room)])
            _ = try await chatter.emitWithAck("room:clear", ["roomId": .string(room)])
            try await bobSocket.expectNoEvent("room:cleared", within: .milliseconds(300))
            let clearedOffset = try Self.offset(try JSONValue(try await chatter.nextEvent("room:cleared")))
            let afterClear = try await Self.joinQuietly(cluster, bobSocket, room)
            #expect(afterClear["elements"] == [])
            #expect(try Self.offset(afterClear) >= clearedOffset)
        }
    }

    // MARK: Races

    @Test("80 concurrent bring-to-front from two nodes: every client's view equals REST, all zIndex unique")
    func bringToFrontRace() async throws {
        try await TwoNodeCluster.with { cluster in
            let alice = try await cluster.register("alice")
            let bob = try await cluster.register("bob")
            let room = try await cluster.createRoom(by: alice, with: [bob])
            let aliceSocket = try await cluster.connect(alice, to: cluster.node1)
            let bobSocket = try await cluster.connect(bob, to: cluster.node2)
            // A watcher that does nothing but apply events, on node 2.
            let watcher = try await cluster.connect(alice, to: cluster.node2)
            var ids: [String] = []
            for index in 0..<3 { ids.append(try #require(try await Self.create(aliceSocket, room, Self.note(x: Double(index)))["id"].stringValue)) }
            let elementIDs = ids
            let sockets = [aliceSocket, bobSocket, watcher]
            var batches: [JSONValue] = []
            for socket in sockets { batches.append(try await Self.joinQuietly(cluster, socket, room)) }
            #expect(batches.allSatisfy { $0["elements"] == batches[0]["elements"] })
            let start = try await Self.lastOffset(cluster, room)

            let acks = try await withThrowingTaskGroup(of: JSONValue.self) { group in
                for index in 0..<80 {
                    let socket = index.isMultiple(of: 2) ? aliceSocket : bobSocket
                    let id = elementIDs[(index / 2 + index % 2) % 3]
                    group.addTask { try await socket.emitWithAck("element:bring-to-front", ["roomId": .string(room), "elementId": .string(id)]) }
                }
                return try await group.reduce(into: [JSONValue]()) { $0.append($1) }
            }
            #expect(acks.count == 80)
            #expect(acks.allSatisfy { $0["data"]["zIndex"].intValue != nil }, "\(acks.filter { $0["data"].isNull })")

            let moves = try await Self.streamIDs(cluster, room, after: start, of: "element:z-index-changed")
            #expect(!moves.isEmpty)
            let rest = try await Self.elements(cluster, room, as: bob)
            let restOrder = rest.compactMap { $0["id"].stringValue }
            let restZ = rest.compactMap { $0["zIndex"].intValue }
            #expect(Set(restZ).count == 3)
            #expect(restZ == restZ.sorted())

            for (socket, batch) in zip(sockets, batches) {
                #expect(try await eventually { await socket.events(named: "element:z-index-changed").count >= moves.count })
                let events = try await socket.events(named: "element:z-index-changed").map { try JSONValue($0) }
                #expect(events.count == moves.count)
                #expect(events.compactMap { $0["offset"].stringValue } == moves)
                var view: [String: Int] = [:]
                for element in try #require(batch["elements"].arrayValue) {
                    // Bound first: assigned straight into the dictionary, `#require` would check
                    // `Int??` and never fail.
                    let zIndex = try #require(element["zIndex"].intValue)
                    view[try #require(element["id"].stringValue)] = zIndex
                }
                var previous = 3
                for event in events {
                    let z = try #require(event["zIndex"].intValue)
                    #expect(z == previous + 1, "zIndex must take the next value: \(event)")
                    previous = z
                    view[try #require(event["elementId"].stringValue)] = z
                }
                let applied = view.sorted { $0.value < $1.value }
                #expect(applied.map(\.key) == restOrder)
                #expect(applied.map(\.value) == restZ)
                #expect(Set(view.values).count == 3)
            }
            // No ack reports a zIndex higher than the last one given.
            #expect(acks.compactMap { $0["data"]["zIndex"].intValue }.max() == restZ.last)
        }
    }

    @Test("joining while elements are being created: batch plus later events hold every element exactly once")
    func joinRace() async throws {
        try await TwoNodeCluster.with { cluster in
            let alice = try await cluster.register("alice")
            let bob = try await cluster.register("bob")
            let room = try await cluster.createRoom(by: alice, with: [bob])
            // Spammers on both nodes; one is joined, so node 1 is already subscribed to the room.
            let spammer1 = try await cluster.connect(alice, to: cluster.node1)
            let spammer2 = try await cluster.connect(bob, to: cluster.node2)
            _ = try await Self.join(spammer1, room)
            let perSpammer = 60
            // Most of the spam runs while the joiners join; the rest only once the last has joined,
            // so every joiner comes before the end however slow the machine is.
            let afterJoins = 15

            async let spam1: [String] = Self.spam(spammer1, room, count: perSpammer - afterJoins)
            async let spam2: [String] = Self.spam(spammer2, room, count: perSpammer - afterJoins)

            // Joiners at three points of the stream, on both nodes.
            var joiners: [(socket: SocketIOTestClient, batch: JSONValue)] = []
            for (threshold, node) in [(10, cluster.node2), (40, cluster.node1), (75, cluster.node2)] {
                #expect(try await eventually(within: .seconds(30)) {
                    let count = try await cluster.withRedis { try await $0.send("HGET", "room:{\(room)}", "elementCount") }
                    return Int(count.string ?? "0") ?? 0 >= threshold
                })
                let socket = try await cluster.connect(bob, to: node)
                joiners.append((socket, try await Self.join(socket, room)))
            }
            async let late1: [String] = Self.spam(spammer1, room, count: afterJoins)
            async let late2: [String] = Self.spam(spammer2, room, count: afterJoins)
            let created = try await spam1 + spam2 + late1 + late2
            #expect(created.count == 2 * perSpammer)
            #expect(Set(created).count == created.count)
            let all = Set(created)
            let finalCount = try await Self.elementCount(cluster, room, as: alice)
            #expect(finalCount == all.count)

            for (index, joiner) in joiners.enumerated() {
                let batchOffset = try Self.offset(joiner.batch)
                let batchIDs = try #require(joiner.batch["elements"].arrayValue).compactMap { $0["id"].stringValue }
                #expect(batchIDs.count > 0, "joiner \(index) joined after elements existed")
                #expect(batchIDs.count < all.count, "joiner \(index) joined before the spam ended")
                let complete = try await eventually {
                    await joiner.socket.events(named: "element:created").count >= all.count - batchIDs.count
                }
                #expect(complete, "joiner \(index)")
                try await joiner.socket.expectNoEvent("elements:batch", within: .milliseconds(100))
                let events = try await joiner.socket.events(named: "element:created").map { try JSONValue($0) }
                let eventIDs = events.compactMap { $0["element"]["id"].stringValue }
                #expect(Set(batchIDs).count == batchIDs.count, "joiner \(index): duplicates in the batch")
                #expect(Set(eventIDs).count == eventIDs.count, "joiner \(index): an element:created came twice")
                #expect(Set(batchIDs).isDisjoint(with: eventIDs), "joiner \(index): an event repeats the batch")
                #expect(Set(batchIDs).union(eventIDs) == all, "joiner \(index): missing \(all.subtracting(batchIDs).subtracting(eventIDs).count)")
                for event in events {
                    #expect(try Self.offset(event) > batchOffset, "joiner \(index): an event older than the batch: \(event)")
                }
                let offsets = try events.map { try Self.offset($0) }
                #expect(offsets == offsets.sorted(), "joiner \(index): events out of order")
                // In arrival order: the batch first, every element event after it.
                let log = await joiner.socket.allEvents().map(\.name).filter { $0 == "elements:batch" || $0 == "element:created" }
                #expect(log.first == "elements:batch", "joiner \(index): \(log.prefix(3))")
                // The batch is itself in z-order and consistent with the events that followed.
                let zs = try #require(joiner.batch["elements"].arrayValue).compactMap { $0["zIndex"].intValue }
                #expect(zs == zs.sorted())
                #expect(zs + events.compactMap { $0["element"]["zIndex"].intValue } == Array(1...all.count))
            }
        }
    }

    @Test("joining again while elements are being created: after the new batch, no event repeats it and none is missing")
    func rejoinRace() async throws {
        try await TwoNodeCluster.with { cluster in
            let alice = try await cluster.register("alice")
            let bob = try await cluster.register("bob")
            let room = try await cluster.createRoom(by: alice, with: [bob])
            let spammer1 = try await cluster.connect(alice, to: cluster.node1)
            let spammer2 = try await cluster.connect(alice, to: cluster.node2)
            let watchers = [try await cluster.connect(bob, to: cluster.node2), try await cluster.connect(bob, to: cluster.node1)]
            for watcher in watchers { _ = try await Self.join(watcher, room) }
            let perSpammer = 60
            // Most of the spam runs while the watchers join again; the rest only once the last
            // has, so every join comes before the end however slow the machine is.
            let afterJoins = 15

            async let spam1: [String] = Self.spam(spammer1, room, count: perSpammer - afterJoins)
            async let spam2: [String] = Self.spam(spammer2, room, count: perSpammer - afterJoins)
            for threshold in [15, 45, 80] {
                #expect(try await eventually(within: .seconds(30)) {
                    let count = try await cluster.withRedis { try await $0.send("HGET", "room:{\(room)}", "elementCount") }
                    return Int(count.string ?? "0") ?? 0 >= threshold
                })
                // Both watchers join again at once: a fresh batch while events keep coming.
                async let first = Self.join(watchers[0], room)
                async let second = Self.join(watchers[1], room)
                _ = try await (first, second)
            }
            async let late1: [String] = Self.spam(spammer1, room, count: afterJoins)
            async let late2: [String] = Self.spam(spammer2, room, count: afterJoins)
            let created = try await spam1 + spam2 + late1 + late2
            let all = Set(created)
            #expect(all.count == 2 * perSpammer)

            for (index, watcher) in watchers.enumerated() {
                // Events the last batch holds are not sent again: wait until the last batch and
                // the events after it cover every element.
                #expect(try await eventually {
                    let log = await watcher.allEvents()
                    guard let last = log.lastIndex(where: { $0.name == "elements:batch" }) else { return false }
                    let batch = try JSONValue(log[last].payload)["elements"].arrayValue ?? []
                    let after = log[(last + 1)...].filter { $0.name == "element:created" }
                    return batch.count + after.count >= all.count
                })
                try await Task.sleep(for: .milliseconds(200))
                let log = await watcher.allEvents().filter { $0.name == "elements:batch" || $0.name == "element:created" }
                let batches = log.indices.filter { log[$0].name == "elements:batch" }
                #expect(batches.count == 4, "watcher \(index)")
                // Each batch replaces the client's canvas; the events up to the next batch apply on
                // top of it. After every batch: no event it already holds, none twice, and what the
                // client has then is all in the next batch (or, after the last, every element).
                for (position, start) in batches.enumerated() {
                    let batch = try JSONValue(log[start].payload)
                    let batchOffset = try Self.offset(batch)
                    var seen = try #require(batch["elements"].arrayValue).compactMap { $0["id"].stringValue }
                    #expect(Set(seen).count == seen.count)
                    let end = position + 1 < batches.count ? batches[position + 1] : log.endIndex
                    for entry in log[(start + 1)..<end] where entry.name == "element:created" {
                        let event = try JSONValue(entry.payload)
                        #expect(try Self.offset(event) > batchOffset, "watcher \(index): an event the batch at \(batchOffset) already holds: \(event["offset"])")
                        seen.append(try #require(event["element"]["id"].stringValue))
                    }
                    #expect(Set(seen).count == seen.count, "watcher \(index): \(seen.count - Set(seen).count) elements twice after the batch at \(batchOffset)")
                    if end == log.endIndex {
                        #expect(Set(seen) == all, "watcher \(index): \(all.subtracting(seen).count) missing after the last batch")
                    } else {
                        let next = Set(try JSONValue(log[end].payload)["elements"].arrayValue?.compactMap { $0["id"].stringValue } ?? [])
                        #expect(Set(seen).isSubset(of: next), "watcher \(index): \(Set(seen).subtracting(next).count) elements the next batch lacks")
                    }
                }
            }
        }
    }

    /// Creates `count` elements one after another; returns their ids.
    static func spam(_ socket: SocketIOTestClient, _ room: String, count: Int) async throws -> [String] {
        var ids: [String] = []
        for index in 0..<count {
            let ack = try await socket.emitWithAck("element:create", ["roomId": .string(room), "element": note(x: Double(index))])
            guard let id = ack["data"]["element"]["id"].stringValue else { throw TestFailure("create failed: \(ack)") }
            ids.append(id)
        }
        return ids
    }

    // MARK: Refusals

    @Test("a non-participant is forbidden everywhere, unknown rooms and elements are not_found, and outsiders get no events")
    func outsiders() async throws {
        try await TwoNodeCluster.with { cluster in
            let alice = try await cluster.register("alice")
            let bob = try await cluster.register("bob")
            let eve = try await cluster.register("eve")
            let room = try await cluster.createRoom(by: alice, with: [bob])
            let eveRoom = try await cluster.createRoom(by: eve, with: [bob])
            let aliceSocket = try await cluster.connect(alice, to: cluster.node1)
            let eveSocket = try await cluster.connect(eve, to: cluster.node2)
            let eveOnNode1 = try await cluster.connect(eve, to: cluster.node1)
            _ = try await Self.join(aliceSocket, room)
            // Eve sits in her own room on both nodes: she gets that room's events only.
            _ = try await Self.join(eveSocket, eveRoom)
            _ = try await Self.join(eveOnNode1, eveRoom)
            let element = try await Self.create(aliceSocket, room)
            let id = try #require(element["id"].stringValue)
            let roomID: JSONValue = .string(room)

            #expect(try await eveSocket.emitWithAck("room:join", ["roomId": roomID])["error"]["code"] == "forbidden")
            let attempts: [(String, JSONValue)] = [
                ("element:create", ["roomId": roomID, "element": Self.note()]),
                ("element:update", ["roomId": roomID, "elementId": .string(id), "updates": ["content": "mine now"]]),
                ("element:update", ["roomId": roomID, "elementId": .string(id), "updates": ["positionX": 1]]),
                ("element:transform", ["roomId": roomID, "elementId": .string(id), "scaleX": 3]),
                ("element:bring-to-front", ["roomId": roomID, "elementId": .string(id)]),
                ("element:delete", ["roomId": roomID, "elementId": .string(id)]),
                ("element:delete", ["roomId": roomID, "elementId": "doesnotexist"]),
                ("room:clear", ["roomId": roomID]),
            ]
            for (event, payload) in attempts {
                let ack = try await eveSocket.emitWithAck(event, payload)
                #expect(ack["error"]["code"] == "forbidden", "\(event): \(ack)")
                #expect(ack["error"]["message"].stringValue?.isEmpty == false)
            }
            // Unknown element and unknown room, for a participant.
            for (event, payload) in [
                ("element:update", ["roomId": roomID, "elementId": "doesnotexist", "updates": ["content": "x"]]),
                ("element:transform", ["roomId": roomID, "elementId": "doesnotexist", "rotation": 1]),
                ("element:bring-to-front", ["roomId": roomID, "elementId": "doesnotexist"]),
                ("element:delete", ["roomId": roomID, "elementId": "doesnotexist"]),
                ("element:create", ["roomId": "nosuchroom", "element": Self.note()]),
                ("element:bring-to-front", ["roomId": "nosuchroom", "elementId": .string(id)]),
                ("room:clear", ["roomId": "nosuchroom"]),
                ("room:join", ["roomId": "nosuchroom"]),
            ] as [(String, JSONValue)] {
                let ack = try await aliceSocket.emitWithAck(event, payload)
                #expect(ack["error"]["code"] == "not_found", "\(event): \(ack)")
            }
            // REST for Eve: 403 each time.
            let base = "/api/rooms/\(room)/elements"
            for (method, path, body) in [
                ("GET", base, nil), ("POST", base, #"{"type":"note","positionX":0,"positionY":0,"width":1,"height":1}"#),
                ("PATCH", "\(base)/\(id)", #"{"content":"x"}"#), ("DELETE", "\(base)/\(id)", nil),
            ] as [(String, String, String?)] {
                let response = try await Self.rest(method, path, as: eve, body: body, on: cluster.node2)
                #expect(response.status == 403, "\(method) \(path): \(response.json)")
                #expect(response.json["error"]["code"] == "forbidden")
            }
            #expect(try await Self.rest("GET", "/api/rooms/\(room)", as: eve, on: cluster.node1).status == 403)

            // Nothing changed, and Alice's activity reaches no socket of Eve's.
            #expect(try await Self.elements(cluster, room, as: alice) == [element])
            _ = try await Self.create(aliceSocket, room)
            _ = try await aliceSocket.emitWithAck("element:bring-to-front", ["roomId": roomID, "elementId": .string(id)])
            _ = try await aliceSocket.emitWithAck("room:clear", ["roomId": roomID])
            _ = try await aliceSocket.nextEvent("room:cleared")
            for socket in [eveSocket, eveOnNode1] {
                for name in Self.elementEvents {
                    try await socket.expectNoEvent(name, within: .milliseconds(name == "element:created" ? 300 : 5))
                }
            }
            #expect(try await Self.elementCount(cluster, room, as: alice) == 0)
        }
    }

    @Test("invalid payloads get invalid_payload naming the field, and the connection stays usable")
    func invalidPayloads() async throws {
        try await TwoNodeCluster.with { cluster in
            let alice = try await cluster.register("alice")
            let bob = try await cluster.register("bob")
            let room = try await cluster.createRoom(by: alice, with: [bob])
            let socket = try await cluster.connect(alice, to: cluster.node1)
            _ = try await Self.join(socket, room)
            let element = try await Self.create(socket, room)
            _ = try await socket.nextEvent("element:created")
            let id = try #require(element["id"].stringValue)
            let roomID: JSONValue = .string(room)
            let elementID: JSONValue = .string(id)
            let valid: [String: JSONValue] = ["type": "note", "positionX": 0, "positionY": 0, "width": 1, "height": 1]
            func with(_ key: String, _ value: JSONValue?) -> JSONValue {
                var members = valid
                members[key] = value
                return .object(members)
            }

            let cases: [(event: String, payload: String, field: String?)] = [
                ("element:create", #"{"roomId":"\#(room)"}"#, "element"),
                ("element:create", #"{"element":\#(JSONValue.object(valid))}"#, "roomId"),
                ("element:create", #"{"roomId":"\#(room)","element":"note"}"#, "element"),
                ("element:create", #"{"roomId":"\#(room)","element":\#(with("colour", "red"))}"#, "colour"),
                ("element:create", #"{"roomId":"\#(room)","element":\#(with("zIndex", 7))}"#, "zIndex"),
                ("element:create", #"{"roomId":"\#(room)","element":\#(with("type", "chart"))}"#, "type"),
                ("element:create", #"{"roomId":"\#(room)","element":\#(with("positionX", "0"))}"#, "positionX"),
                ("element:create", #"{"roomId":"\#(room)","element":\#(with("width", 0))}"#, "width"),
                ("element:create", #"{"roomId":"\#(room)","element":\#(with("scaleX", 1001))}"#, "scaleX"),
                ("element:create", #"{"roomId":"\#(room)","element":\#(with("positionY", 1e8))}"#, "positionY"),
                ("element:create", #"{"roomId":"\#(room)","element":\#(with("height", nil))}"#, "height"),
                ("element:create", #"{"roomId":"\#(room)","element":\#(with("stickerText", .string(String(repeating: "s", count: 801))))}"#, "stickerText"),
                ("element:create", #"{"roomId":"\#(room)","element":\#(with("content", .string(String(repeating: "c", count: 80_001))))}"#, "content"),
                ("element:create", #"{"roomId":"\#(room)","element":{"type":"note","positionX":0,"positionY":0,"width":1,"height":1,"rotation":1e400}}"#, nil),
                ("element:update", #"{"roomId":"\#(room)","elementId":"\#(id)","updates":{}}"#, "updates"),
                ("element:update", #"{"roomId":"\#(room)","elementId":"\#(id)"}"#, "updates"),
                ("element:update", #"{"roomId":"\#(room)","elementId":"\#(id)","updates":{"type":"photo"}}"#, "type"),
                ("element:update", #"{"roomId":"\#(room)","elementId":"\#(id)","updates":{"duration":-1}}"#, "duration"),
                ("element:update", #"{"roomId":"\#(room)","updates":{"content":"x"}}"#, "elementId"),
                ("element:update", #"{"roomId":"\#(room)","elementId":"bad id!","updates":{"content":"x"}}"#, "elementId"),
                ("element:transform", #"{"roomId":"\#(room)","elementId":"\#(id)","content":"x"}"#, "content"),
                ("element:transform", #"{"roomId":"\#(room)","elementId":"\#(id)","scaleX":"2"}"#, "scaleX"),
                ("element:transform", #"{"roomId":"\#(room)","elementId":"\#(id)","rotation":2000000}"#, "rotation"),
                ("element:transform", #"{"roomId":"\#(room)","scaleX":2}"#, "elementId"),
                ("element:bring-to-front", #"{"roomId":"\#(room)"}"#, "elementId"),
                ("element:bring-to-front", #"{"roomId":"\#(room)","elementId":5}"#, "elementId"),
                ("element:bring-to-front", #"{"roomId":"{bad}","elementId":"\#(id)"}"#, "roomId"),
                ("element:delete", #"{"elementId":"\#(id)"}"#, "roomId"),
                ("element:delete", #"{"roomId":"\#(room)","elementId":"room:{x}"}"#, "elementId"),
                ("room:clear", "{}", "roomId"),
                ("room:clear", #"{"roomId":7}"#, "roomId"),
                ("room:clear", #"["\#(room)"]"#, nil),
                ("element:create", "null", nil),
                ("element:bring-to-front", #""\#(id)""#, nil),
            ]
            for (event, payload, field) in cases {
                let ack = try JSONValue(try await socket.emitWithAck(event, payload))
                #expect(ack["error"]["code"] == "invalid_payload", "\(event) \(payload.prefix(120)): \(ack)")
                if let field {
                    #expect(ack["error"]["message"].stringValue?.contains(field) == true, "\(event) \(payload.prefix(120)): \(ack)")
                }
            }
            // Without an ack id: an `error` event naming the event.
            try await socket.emit("element:create", #"{"roomId":"\#(room)","element":{"type":"note"}}"#)
            let error = try JSONValue(try await socket.nextEvent("error"))
            #expect(error["code"] == "invalid_payload")
            #expect(error["event"] == "element:create")
            #expect(error["message"].stringValue?.contains("position") == true)

            // Nothing was changed and the connection still works.
            #expect(try await Self.elements(cluster, room, as: alice) == [element])
            try await Fence.message(in: room, from: socket, reaching: [socket])
            try await socket.expectNoEvent("element:created", within: .milliseconds(200))
            try await socket.expectNoEvent("element:updated", within: .milliseconds(5))
            try await socket.expectNoEvent("element:transformed", within: .milliseconds(5))
            try await socket.expectNoEvent("room:cleared", within: .milliseconds(5))
            let ok = try await socket.emitWithAck("element:bring-to-front", ["roomId": roomID, "elementId": elementID])
            #expect(ok == ["data": ["elementId": elementID, "zIndex": 1]])
        }
    }

    @Test("over rooms.max_elements a create is refused with limit_exceeded, on the socket and over REST")
    func elementLimit() async throws {
        try await TwoNodeCluster.with(environment: ["ROOMCAST_ROOMS_MAX_ELEMENTS": "2"]) { cluster in
            let alice = try await cluster.register("alice")
            let bob = try await cluster.register("bob")
            let room = try await cluster.createRoom(by: alice, with: [bob])
            let socket = try await cluster.connect(alice, to: cluster.node1)
            let watcher = try await cluster.connect(bob, to: cluster.node2)
            _ = try await Self.join(watcher, room)
            let first = try await Self.create(socket, room)
            _ = try await Self.create(socket, room)
            let refused = try await socket.emitWithAck("element:create", ["roomId": .string(room), "element": Self.note()])
            #expect(refused["error"]["code"] == "limit_exceeded", "\(refused)")
            let rest = try await Self.rest("POST", "/api/rooms/\(room)/elements", as: bob, body: #"{"type":"note","positionX":0,"positionY":0,"width":1,"height":1}"#, on: cluster.node2)
            #expect(rest.status == 422, "\(rest.json)")
            #expect(rest.json["error"]["code"] == "limit_exceeded")
            #expect(try await Self.elementCount(cluster, room, as: alice) == 2)
            _ = try await watcher.nextEvent("element:created")
            _ = try await watcher.nextEvent("element:created")
            try await watcher.expectNoEvent("element:created", within: .milliseconds(300))

            _ = try await socket.emitWithAck("element:delete", ["roomId": .string(room), "elementId": first["id"]])
            let again = try await Self.create(socket, room)
            #expect(again["zIndex"] == 3)
            // Room events arrive in order: the watcher's next element:created is this one, not a
            // late one for the refused create (however slow the machine was above).
            #expect(try JSONValue(try await watcher.nextEvent("element:created"))["element"]["id"] == again["id"])
        }
    }
}
