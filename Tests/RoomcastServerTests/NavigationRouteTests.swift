import Foundation
import RedisClient
import RoomcastTestSupport
import Testing

@Suite("Navigation over REST: two nodes on one Redis", .serialized)
struct NavigationRouteTests {
    /// `method path` on `node` as `user`, with an optional JSON body; the status and decoded body.
    static func call(
        _ method: String, _ path: String, as user: TestUser, on node: GatewayProcess, body: String? = nil
    ) async throws -> (status: Int, json: JSONValue) {
        var headers = ["Authorization": "Bearer \(user.token)"]
        if body != nil { headers["Content-Type"] = "application/json" }
        let response = try await HTTPTestClient.request(method, port: node.port, path: path, headers: headers, body: body.map { Data($0.utf8) })
        return (response.status, try JSONValue(response.text))
    }

    /// Sets a room's `updatedAt` (epoch ms) in Redis, as element changes would.
    static func setUpdatedAt(_ cluster: TwoNodeCluster, _ room: String, _ milliseconds: Int) async throws {
        _ = try await cluster.withRedis { try await $0.send("HSET", "room:{\(room)}", "updatedAt", milliseconds) }
    }

    static var nowMilliseconds: Int { Int((Date().timeIntervalSince1970 * 1000).rounded()) }

    static func keys(_ value: JSONValue) -> Set<String> { Set(value.objectValue?.keys.map { $0 } ?? []) }

    @Test("my-rooms: full rooms with badges and hasUnread, newest updatedAt first, isActive from presence")
    func myRooms() async throws {
        try await TwoNodeCluster.with { cluster in
            let alice = try await cluster.register("alice")
            let bob = try await cluster.register("bob")
            let carol = try await cluster.register("carol")
            let pair = try await cluster.createRoom(by: alice, with: [bob])
            let group = try await cluster.createRoom(by: bob, with: [alice, carol], on: cluster.node2)
            let quiet = try await cluster.createRoom(by: carol, with: [alice])
            let other = try await cluster.createRoom(by: bob, with: [carol])
            try await Self.setUpdatedAt(cluster, pair, 2_000)
            try await Self.setUpdatedAt(cluster, group, 3_000)
            try await Self.setUpdatedAt(cluster, quiet, 1_000)
            let now = Self.nowMilliseconds
            _ = try await cluster.withRedis { redis in
                try await redis.pipeline([
                    // Twelve messages: Alice has read 9 (3 unseen), Bob 3 (9 unseen).
                    RedisCommand("HSET", "room:{\(pair)}", "messageSeq", 12),
                    RedisCommand("HSET", "room:{\(pair)}:read:messages", alice.id, 9, bob.id, 3),
                    RedisCommand("HSET", "room:{\(group)}:unseen", alice.id, 2),
                    RedisCommand("HSET", "room:{\(quiet)}:unseen", carol.id, 4),
                    RedisCommand("HSET", "room:{\(other)}:unseen", alice.id, 8),
                    // Bob has the group room open (expires in a minute); Carol's entry in the quiet room expired.
                    RedisCommand("ZADD", "room:{\(group)}:presence", now + 60_000, "\(bob.id)|s1"),
                    RedisCommand("ZADD", "room:{\(quiet)}:presence", now - 5_000, "\(carol.id)|s2"),
                ])
            }

            let (status, json) = try await Self.call("GET", "/api/rooms/my-rooms", as: alice, on: cluster.node2)
            #expect(status == 200, "\(json)")
            let rooms = try #require(json["data"].arrayValue)
            #expect(rooms.map(\.["id"]) == [.string(group), .string(pair), .string(quiet)])
            for room in rooms {
                #expect(
                    Self.keys(room) == ["id", "name", "createdBy", "createdAt", "updatedAt", "isActive", "participants", "elementCount", "badges", "hasUnread"]
                )
                #expect(room["elementCount"] == 0)
            }
            #expect(rooms.map(\.["badges"]) == [["messages": 0, "elements": 2], ["messages": 3, "elements": 0], ["messages": 0, "elements": 0]])
            #expect(rooms.map(\.["hasUnread"]) == [true, true, false])
            #expect(rooms.map(\.["isActive"]) == [true, false, false])
            #expect(rooms.map(\.["updatedAt"]) == ["1970-01-01T00:00:03.000Z", "1970-01-01T00:00:02.000Z", "1970-01-01T00:00:01.000Z"])
            #expect(rooms[0]["createdBy"].stringValue == bob.id)
            #expect(rooms[1]["name"] == nil)
            #expect(rooms[1].objectValue?["name"] == .null)
            let participants = try #require(rooms[0]["participants"].arrayValue)
            #expect(Set(participants.compactMap(\.["id"].stringValue)) == [alice.id, bob.id, carol.id])
            // The public profile: no email.
            #expect(Self.keys(participants[0]) == ["id", "username", "firstName", "lastName", "avatarUrl", "createdAt"])

            // GET /api/rooms/:roomId agrees on isActive.
            let single = try await Self.call("GET", "/api/rooms/\(group)", as: alice, on: cluster.node1)
            #expect(single.json["data"]["isActive"] == true)
            #expect(try await Self.call("GET", "/api/rooms/\(quiet)", as: alice, on: cluster.node1).json["data"]["isActive"] == false)

            let bobs = try await Self.call("GET", "/api/rooms/my-rooms", as: bob, on: cluster.node1).json["data"]
            #expect(bobs.arrayValue?.count == 3)
            #expect(bobs[0]["id"].stringValue == other, "never updated since creation: the newest")
            #expect(bobs.arrayValue?.map(\.["badges"]["messages"]) == [0, 0, 9])

            let newcomer = try await cluster.register("dave")
            #expect(try await Self.call("GET", "/api/rooms/my-rooms", as: newcomer, on: cluster.node1).json == ["data": []])
            let anonymous = try await HTTPTestClient.request(port: cluster.node1.port, path: "/api/rooms/my-rooms")
            #expect(anonymous.status == 401)
        }
    }

    @Test("grouped-by-person: people with their shared rooms, group rooms under each, newest first")
    func groupedByPerson() async throws {
        try await TwoNodeCluster.with { cluster in
            let alice = try await cluster.register("alice")
            let bob = try await cluster.register("bob")
            let carol = try await cluster.register("carol")
            let eve = try await cluster.register("eve")
            let withBob = try await cluster.createRoom(by: alice, with: [bob])
            let group = try await cluster.createRoom(by: bob, with: [alice, carol], on: cluster.node2)
            let withCarol = try await cluster.createRoom(by: carol, with: [alice])
            let elsewhere = try await cluster.createRoom(by: bob, with: [eve])
            try await Self.setUpdatedAt(cluster, withBob, 1_000)
            try await Self.setUpdatedAt(cluster, group, 3_000)
            try await Self.setUpdatedAt(cluster, withCarol, 5_000)
            try await Self.setUpdatedAt(cluster, elsewhere, 9_000)
            _ = try await cluster.withRedis { try await $0.send("HSET", "room:{\(group)}", "elementCount", 2) }
            let renamed = try await Self.call("PUT", "/api/rooms/\(withBob)/name", as: bob, on: cluster.node2, body: #"{"name":"Bob & Alice"}"#)
            #expect(renamed.status == 200)
            try await Self.setUpdatedAt(cluster, withBob, 1_000)

            let (status, json) = try await Self.call("GET", "/api/rooms/grouped-by-person", as: alice, on: cluster.node1)
            #expect(status == 200, "\(json)")
            let people = try #require(json["data"].arrayValue)
            #expect(people.map(\.["id"]) == [.string(carol.id), .string(bob.id)])
            #expect(people.map(\.["username"]) == ["carol", "bob"])
            for person in people {
                #expect(Self.keys(person) == ["id", "username", "firstName", "lastName", "avatarUrl", "createdAt", "rooms"])
                for room in person["rooms"].arrayValue ?? [] {
                    #expect(Self.keys(room) == ["id", "name", "createdAt", "updatedAt", "isActive", "elementCount"])
                }
            }
            #expect(people[0]["rooms"].arrayValue?.map(\.["id"]) == [.string(withCarol), .string(group)])
            #expect(people[1]["rooms"].arrayValue?.map(\.["id"]) == [.string(group), .string(withBob)])
            #expect(people[1]["rooms"][0] == people[0]["rooms"][1], "the group room reads the same under both")
            #expect(people[1]["rooms"][0]["elementCount"] == 2)
            #expect(people[1]["rooms"][0]["name"] == nil)
            #expect(people[1]["rooms"][0].objectValue?["name"] == .null)
            #expect(people[1]["rooms"][0]["updatedAt"] == "1970-01-01T00:00:03.000Z")
            #expect(people[1]["rooms"][0]["isActive"] == false)
            #expect(people[1]["rooms"][1]["name"] == "Bob & Alice")

            let bobs = try await Self.call("GET", "/api/rooms/grouped-by-person", as: bob, on: cluster.node2).json["data"]
            #expect(bobs.arrayValue?.map(\.["username"]) == ["eve", "alice", "carol"])
            let loner = try await cluster.register("dave")
            #expect(try await Self.call("GET", "/api/rooms/grouped-by-person", as: loner, on: cluster.node2).json == ["data": []])
        }
    }

    @Test("users/without-rooms pages in 3 pages, stable when someone registers meanwhile; bad cursor or limit refused")
    func usersWithoutRooms() async throws {
        try await TwoNodeCluster.with { cluster in
            let alice = try await cluster.register("alice")
            let bob = try await cluster.register("bob")
            var strangers: [TestUser] = []
            for index in 1...7 { strangers.append(try await cluster.register("stranger\(index)", on: index.isMultiple(of: 2) ? cluster.node2 : nil)) }
            _ = try await cluster.createRoom(by: bob, with: [alice])
            let carol = try await cluster.register("carol")
            _ = try await cluster.createRoom(by: alice, with: [carol], on: cluster.node2)

            let first = try await Self.call("GET", "/api/users/without-rooms?limit=3", as: alice, on: cluster.node1)
            #expect(first.status == 200, "\(first.json)")
            #expect(Self.keys(first.json) == ["data", "nextCursor"])
            let firstCursor = try #require(first.json["nextCursor"].stringValue)
            // `<createdAt>-<id>`: the OpenAPI document's exact pattern.
            #expect(firstCursor.wholeMatch(of: /[0-9]{1,18}-[A-Za-z0-9_-]{1,64}/) != nil, "\(firstCursor)")
            #expect(first.json["data"].arrayValue?.count == 3)
            // The public profile and, as the seed shows, the email.
            #expect(Self.keys(first.json["data"][0]) == ["id", "username", "firstName", "lastName", "avatarUrl", "email", "createdAt"])

            // Someone registers between pages: they come last, nobody repeats or goes missing.
            let latecomer = try await cluster.register("latecomer", on: cluster.node2)
            let second = try await Self.call("GET", "/api/users/without-rooms?limit=3&cursor=\(firstCursor)", as: alice, on: cluster.node2)
            #expect(second.json["data"].arrayValue?.count == 3)
            let secondCursor = try #require(second.json["nextCursor"].stringValue)
            let third = try await Self.call("GET", "/api/users/without-rooms?cursor=\(secondCursor)&limit=3", as: alice, on: cluster.node1)
            #expect(third.status == 200)
            #expect(third.json["nextCursor"] == nil)
            #expect(third.json.objectValue?["nextCursor"] == .null)

            let listed = [first, second, third].flatMap { $0.json["data"].arrayValue ?? [] }.compactMap(\.["id"].stringValue)
            let index = try await cluster.withRedis { try await $0.send(RedisCommand("ZRANGE", "users", 0, -1), as: [String].self) }
            #expect(listed == index.filter { ![alice.id, bob.id, carol.id].contains($0) })
            #expect(listed.count == 8)
            #expect(Set(listed) == Set((strangers + [latecomer]).map(\.id)))
            #expect(listed.last == latecomer.id)
            let usernames = [first, second, third].flatMap { $0.json["data"].arrayValue ?? [] }.map(\.["username"])
            #expect(usernames.last == "latecomer")

            // The default page holds them all; Bob sees only Carol and the strangers.
            let all = try await Self.call("GET", "/api/users/without-rooms", as: alice, on: cluster.node2)
            #expect(all.json["data"].arrayValue?.compactMap(\.["id"].stringValue) == listed)
            #expect(all.json["nextCursor"] == nil)
            let bobs = try await Self.call("GET", "/api/users/without-rooms?cursor=&limit=", as: bob, on: cluster.node2).json["data"]
            #expect(Set(bobs.arrayValue?.compactMap(\.["id"].stringValue) ?? []) == Set((strangers + [latecomer, carol]).map(\.id)))

            // Any text of the cursor's form is a position, given out or not: the page after it.
            let (createdAt, lastOfFirst) = try #require(firstCursor.firstIndex(of: "-").map { (firstCursor[..<$0], firstCursor[firstCursor.index(after: $0)...]) })
            let afterAPosition = try await Self.call("GET", "/api/users/without-rooms?limit=3&cursor=\(createdAt)-\(lastOfFirst)_", as: alice, on: cluster.node1)
            #expect(afterAPosition.status == 200, "\(afterAPosition.json)")
            #expect(afterAPosition.json["data"] == second.json["data"])
            #expect(try await Self.call("GET", "/api/users/without-rooms?cursor=0-a", as: alice, on: cluster.node1).json["data"] == all.json["data"])
            #expect(try await Self.call("GET", "/api/users/without-rooms?cursor=999999999999999999-a", as: alice, on: cluster.node1).json["data"] == [])
            // The base64url form of `<createdAt>:<id>` that earlier versions gave out is still read.
            let legacy = Data("\(createdAt):\(lastOfFirst)".utf8).base64EncodedString()
                .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
            let fromLegacy = try await Self.call("GET", "/api/users/without-rooms?limit=3&cursor=\(legacy)", as: alice, on: cluster.node2)
            #expect(fromLegacy.json["data"] == second.json["data"], "\(legacy): \(fromLegacy.json)")

            for query in [
                "limit=0", "limit=101", "limit=abc", "limit=-1", "limit=2.5", "cursor=!!!", "cursor=Zm9v", "cursor=\(firstCursor)%3D",
                "cursor=-abc", "cursor=12-", "cursor=1234567890123456789-a", "cursor=12:abc",
            ] {
                let refused = try await Self.call("GET", "/api/users/without-rooms?\(query)", as: alice, on: cluster.node1)
                #expect(refused.status == 400, "\(query): \(refused.json)")
                #expect(refused.json["error"]["code"] == "invalid_payload", "\(query)")
            }
            #expect(try await Self.call("GET", "/api/users/without-rooms?limit=100", as: alice, on: cluster.node1).status == 200)
        }
    }

    @Test("rename: room:updated reaches the other participant on the other node, updatedAt moves, \"\" clears, bad input refused")
    func rename() async throws {
        try await TwoNodeCluster.with { cluster in
            let alice = try await cluster.register("alice")
            let bob = try await cluster.register("bob")
            let eve = try await cluster.register("eve")
            let room = try await cluster.createRoom(by: alice, with: [bob])
            try await Self.setUpdatedAt(cluster, room, 1_000)
            let bobSocket = try await cluster.connect(bob, to: cluster.node2)
            let aliceSocket = try await cluster.connect(alice, to: cluster.node2)
            let eveSocket = try await cluster.connect(eve, to: cluster.node2)

            let named = try await Self.call("PUT", "/api/rooms/\(room)/name", as: alice, on: cluster.node1, body: #"{"name":"Italian engagement 2025"}"#)
            #expect(named.status == 200, "\(named.json)")
            let data = named.json["data"]
            #expect(Self.keys(data) == ["id", "name", "createdBy", "createdAt", "updatedAt", "isActive", "participants", "elementCount"])
            #expect(data["id"].stringValue == room)
            #expect(data["name"] == "Italian engagement 2025")
            #expect(data["updatedAt"] != "1970-01-01T00:00:01.000Z")
            #expect(data["updatedAt"].stringValue.map { $0 > "2020" } == true)
            #expect(data["participants"].arrayValue?.count == 2)

            let atBob = try JSONValue(try await bobSocket.nextEvent("room:updated"))
            #expect(atBob == ["room": data])
            // The renamer's own sockets hear it too; an outsider does not.
            #expect(try JSONValue(try await aliceSocket.nextEvent("room:updated")) == ["room": data])
            try await eveSocket.expectNoEvent("room:updated", within: .milliseconds(300))
            #expect(try await Self.call("GET", "/api/rooms/\(room)", as: bob, on: cluster.node2).json["data"] == data)

            let cleared = try await Self.call("PUT", "/api/rooms/\(room)/name", as: bob, on: cluster.node2, body: #"{"name":""}"#)
            #expect(cleared.status == 200)
            #expect(cleared.json["data"].objectValue?["name"] == .null)
            let clearedEvent = try JSONValue(try await aliceSocket.nextEvent("room:updated"))
            #expect(clearedEvent["room"].objectValue?["name"] == .null)
            #expect(try await cluster.withRedis { try await $0.send(RedisCommand("HGET", "room:{\(room)}", "name"), as: String.self) } == "")
            let blank = try await Self.call("PUT", "/api/rooms/\(room)/name", as: bob, on: cluster.node2, body: #"{"name":"   "}"#)
            #expect(blank.json["data"].objectValue?["name"] == .null)

            let long = try await Self.call(
                "PUT", "/api/rooms/\(room)/name", as: alice, on: cluster.node1, body: #"{"name":"\#(String(repeating: "x", count: 101))"}"#
            )
            #expect(long.status == 400)
            #expect(long.json["error"]["code"] == "invalid_payload")
            let hundred = try await Self.call(
                "PUT", "/api/rooms/\(room)/name", as: alice, on: cluster.node1, body: #"{"name":"\#(String(repeating: "x", count: 100))"}"#
            )
            #expect(hundred.status == 200)
            for body in [#"{}"#, #"{"name":5}"#, #"not json"#] {
                let refused = try await Self.call("PUT", "/api/rooms/\(room)/name", as: alice, on: cluster.node1, body: body)
                #expect(refused.status == 400, "\(body)")
                #expect(refused.json["error"]["code"] == "invalid_payload", "\(body)")
            }

            let outsider = try await Self.call("PUT", "/api/rooms/\(room)/name", as: eve, on: cluster.node1, body: #"{"name":"mine"}"#)
            #expect(outsider.status == 403)
            #expect(outsider.json["error"]["code"] == "forbidden")
            let unknown = try await Self.call("PUT", "/api/rooms/nosuchroom0123/name", as: alice, on: cluster.node1, body: #"{"name":"x"}"#)
            #expect(unknown.status == 404)
            #expect(unknown.json["error"]["code"] == "not_found")
            #expect(try await Self.call("GET", "/api/rooms/\(room)", as: alice, on: cluster.node1).json["data"]["name"] == .string(String(repeating: "x", count: 100)))
        }
    }
}
