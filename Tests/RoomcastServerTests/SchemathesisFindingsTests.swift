import Foundation
import RoomcastTestSupport
import Testing

/// Bugs schemathesis found in the REST API (`scripts/schemathesis.sh`), on a node run as a process.
@Suite("REST: what schemathesis found", .serialized)
struct SchemathesisFindingsTests {
    /// A note's body with optional extra fields.
    static func note(_ extra: String = "") -> String {
        #"{"type":"note","positionX":1,"positionY":2,"width":30,"height":40\#(extra)}"#
    }

    static func post(_ path: String, as user: TestUser, key: String, body: String? = nil, on node: GatewayProcess) async throws -> ElementSocketTests.Response {
        var headers = ["Authorization": "Bearer \(user.token)", "Idempotency-Key": key]
        if body != nil { headers["Content-Type"] = "application/json" }
        let response = try await HTTPTestClient.request("POST", port: node.port, path: path, headers: headers, body: body.map { Data($0.utf8) })
        return ElementSocketTests.Response(status: response.status, json: try JSONValue(response.text))
    }

    /// One `Idempotency-Key` (a socket `requestId`) for an element creation and then a heart
    /// answered the heart with the recorded element, and the other way round an element creation
    /// with the recorded reaction (201 with a reaction as `data`): the replies were kept per user
    /// and room, not per kind of mutation.
    @Test("an Idempotency-Key used for another kind of mutation is another request; a retry of the same kind still replays")
    func keyPerOperation() async throws {
        try await TestRedis.with { redis in
            let node = try await GatewayProcess(arguments: ["--redis-url", redis.url, "--log-level", "warning"])
            let alice = try await TwoNodeCluster.register("alice", on: node)
            let bob = try await TwoNodeCluster.register("bob", on: node)
            let room = try await MetricsEndpointTests.createRoom(by: alice, with: bob, on: node)

            let created = try await Self.post("/api/rooms/\(room)/elements", as: alice, key: "k1", body: Self.note(), on: node)
            #expect(created.status == 201, "\(created.json)")
            let element = try #require(created.json["data"]["id"].stringValue)
            let toggled = try await Self.post("/api/rooms/\(room)/elements/\(element)/reactions/toggle", as: alice, key: "k1", on: node)
            #expect(toggled.status == 200, "\(toggled.json)")
            #expect(toggled.json["data"]["action"].stringValue == "added", "\(toggled.json)")

            // The other order: a heart first, then an element with the heart's key.
            let heart = try await Self.post("/api/rooms/\(room)/elements/\(element)/reactions/toggle", as: bob, key: "k2", on: node)
            #expect(heart.json["data"]["action"].stringValue == "added", "\(heart.json)")
            let second = try await Self.post("/api/rooms/\(room)/elements", as: bob, key: "k2", body: Self.note(), on: node)
            #expect(second.status == 201, "\(second.json)")
            #expect(second.json["data"]["type"].stringValue == "note", "\(second.json)")
            #expect(second.json["data"]["id"].stringValue != element)

            // Retries of the same kind are still answered from the record, changing nothing.
            let again = try await Self.post("/api/rooms/\(room)/elements", as: alice, key: "k1", body: Self.note(), on: node)
            #expect(again.status == 201)
            #expect(again.json["data"]["id"].stringValue == element)
            let heartAgain = try await Self.post("/api/rooms/\(room)/elements/\(element)/reactions/toggle", as: bob, key: "k2", on: node)
            #expect(heartAgain.json["data"]["action"].stringValue == "added", "\(heartAgain.json)")
            let elements = try await ElementSocketTests.rest("GET", "/api/rooms/\(room)/elements", as: alice, on: node)
            #expect(elements.json["data"].arrayValue?.count == 2)
            #expect(elements.json["data"][0]["reactions"]["count"].intValue == 2, "\(elements.json)")
            await node.stop()
        }
    }

    /// `http://` followed by a combining mark or an emoji modifier (`HTTP://🏻x`) was refused as
    /// "not an http or https URL": the scheme was compared character by character, and the mark
    /// joins the second slash into one character.
    @Test("a URL whose host starts with a combining character is a URL", arguments: ["http://\u{1F3FB}x", "https://\u{0301}cdn.example/a.png"])
    func urlSchemeIsBytes(url: String) async throws {
        try await TestRedis.with { redis in
            let node = try await GatewayProcess(arguments: ["--redis-url", redis.url, "--log-level", "warning"])
            let alice = try await TwoNodeCluster.register("alice", on: node)
            let bob = try await TwoNodeCluster.register("bob", on: node)
            let room = try await MetricsEndpointTests.createRoom(by: alice, with: bob, on: node)
            let quoted = String(decoding: try JSONEncoder().encode(url), as: UTF8.self)
            let created = try await ElementSocketTests.rest(
                "POST", "/api/rooms/\(room)/elements", as: alice, body: Self.note(#","thumbnailUrl":\#(quoted)"#), on: node
            )
            #expect(created.status == 201, "\(created.json)")
            #expect(created.json["data"]["thumbnailUrl"].stringValue == url)
            if url.hasPrefix("https") {
                let profile = try await ElementSocketTests.rest("PUT", "/api/users/me", as: alice, body: #"{"avatarUrl":\#(quoted)}"#, on: node)
                #expect(profile.status == 200, "\(profile.json)")
            }
            // Still refused: no host, or another scheme.
            for bad in ["http://", "http:///x", "ftp://x", "http://@x", "javascript:alert(1)"] {
                let body = Self.note(#","imageUrl":\#(String(decoding: try JSONEncoder().encode(bad), as: UTF8.self))"#)
                let refused = try await ElementSocketTests.rest("POST", "/api/rooms/\(room)/elements", as: alice, body: body, on: node)
                #expect(refused.status == 400, "\(bad): \(refused.json)")
            }
            await node.stop()
        }
    }

    /// `GET /api/rooms/:roomId/messages?cursor=0-0` was a 500: Redis refuses `(0-0` as the
    /// exclusive end of `XREVRANGE`. Nothing comes before the first offset: an empty last page.
    @Test("the chat history before offset 0-0 is an empty last page")
    func historyBeforeFirstOffset() async throws {
        try await TestRedis.with { redis in
            let node = try await GatewayProcess(arguments: ["--redis-url", redis.url, "--log-level", "warning"])
            let alice = try await TwoNodeCluster.register("alice", on: node)
            let bob = try await TwoNodeCluster.register("bob", on: node)
            let room = try await MetricsEndpointTests.createRoom(by: alice, with: bob, on: node)
            let socket = try await SocketIOTestClient.connect(port: node.port, auth: #"{"token":"\#(alice.token)"}"#)
            _ = try await ElementSocketTests.join(socket, room)
            let sent = try await socket.emitWithAck("message:send", ["roomId": .string(room), "text": "hello"])
            #expect(sent["data"].objectValue != nil, "\(sent)")
            for cursor in ["0-0", "00-0"] {
                let page = try await ElementSocketTests.rest("GET", "/api/rooms/\(room)/messages?cursor=\(cursor)&limit=1", as: alice, on: node)
                #expect(page.status == 200, "\(page.json)")
                #expect(page.json["data"].arrayValue?.isEmpty == true, "\(page.json)")
                #expect(page.json["nextCursor"] == .null, "\(page.json)")
            }
            let from = try await ElementSocketTests.rest("GET", "/api/rooms/\(room)/messages?cursor=0-1", as: alice, on: node)
            #expect(from.status == 200, "\(from.json)")
            let newest = try await ElementSocketTests.rest("GET", "/api/rooms/\(room)/messages", as: alice, on: node)
            #expect(newest.json["data"].arrayValue?.count == 1, "\(newest.json)")
            _ = try await socket.close()
            await node.stop()
        }
    }

    /// `PUT /api/users/me` setting all four profile fields (the email already set or set in it)
    /// was a 500: nothing was left to clear, and `HDEL` without a field is a Redis error.
    @Test("a profile change that leaves every profile field set is answered")
    func profileWithEveryField() async throws {
        try await TestRedis.with { redis in
            let node = try await GatewayProcess(arguments: ["--redis-url", redis.url, "--log-level", "warning"])
            let alice = try await TwoNodeCluster.register("alice", on: node)
            let every = #"{"firstName":"Alice","lastName":"Liddell","email":"alice@example.com","avatarUrl":"https://cdn.example.com/a.png"}"#
            let first = try await ElementSocketTests.rest("PUT", "/api/users/me", as: alice, body: every, on: node)
            #expect(first.status == 200, "\(first.json)")
            let again = try await ElementSocketTests.rest("PUT", "/api/users/me", as: alice, body: #"{"lastName":"L.","firstName":"A."}"#, on: node)
            #expect(again.status == 200, "\(again.json)")
            #expect(again.json["data"]["email"].stringValue == "alice@example.com")
            #expect(again.json["data"]["lastName"].stringValue == "L.")
            await node.stop()
        }
    }
}
