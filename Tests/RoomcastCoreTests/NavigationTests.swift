import Foundation
import NIOCore
import RedisClient
import RoomcastCore
import RoomcastTestSupport
import Testing

@Suite("Navigation: my rooms, rooms by person, users without rooms, rename (real redis-server)")
struct NavigationTests {
    /// `room:updated {room}` as it arrives on a user channel.
    struct RoomUpdated: Decodable {
        var room: Room
    }

    /// Creates accounts named `names`.
    static func makeUsers(_ redis: any RedisClientProtocol, _ names: String...) async throws -> [User] {
        var users: [User] = []
        for name in names {
            users.append(try await UserStore(redis: redis).create(username: name, passwordHash: "h", displayName: name.uppercased()))
        }
        return users
    }

    /// Sets a room's `updatedAt` (epoch ms) directly, as element scripts would.
    static func setUpdatedAt(_ redis: any RedisClientProtocol, _ room: Room, _ milliseconds: Int) async throws {
        _ = try await redis.send("HSET", RedisKeys.room(room.id), "updatedAt", milliseconds)
    }

    /// A value's JSON as a `JSONValue`, encoded the way the server encodes it.
    static func json(_ value: some Encodable) throws -> JSONValue {
        try JSONValue(String(buffer: try JSONCoding.encode(value)))
    }

    static var nowMilliseconds: Int { Int(Timestamp.now().milliseconds) }

    // MARK: my rooms

    @Test("listings: every room of the caller, newest updatedAt first, with that caller's badges")
    func listingsSortedWithBadges() async throws {
        try await withTestRedis { redis, _ in
            let users = try await Self.makeUsers(redis, "alice", "bob", "carol")
            let (alice, bob, carol) = (users[0], users[1], users[2])
            let store = RoomStore(redis: redis)
            let pair = try await store.create(by: alice.id, with: [bob.id], name: nil)
            let group = try await store.create(by: bob.id, with: [alice.id, carol.id], name: "Trip")
            let quiet = try await store.create(by: carol.id, with: [alice.id], name: "Quiet")
            let notMine = try await store.create(by: bob.id, with: [carol.id], name: "Not alice's")
            try await Self.setUpdatedAt(redis, pair, 2_000)
            try await Self.setUpdatedAt(redis, group, 3_000)
            try await Self.setUpdatedAt(redis, quiet, 1_000)
            try await Self.setUpdatedAt(redis, notMine, 500)
            // The per-user lists keep their creation scores: order comes from the room hashes.
            _ = try await redis.send("ZADD", RedisKeys.userRooms(alice.id), 9_999, quiet.id.rawValue)
            // Ten messages: Alice has read up to the 7th (3 unseen), Bob up to the 3rd (7 unseen).
            _ = try await redis.send("HSET", RedisKeys.room(pair.id), "messageSeq", 10)
            _ = try await redis.send("HSET", RedisKeys.roomMessageReads(pair.id), alice.id.rawValue, 7, bob.id.rawValue, 3)
            _ = try await redis.send("HSET", RedisKeys.roomUnseenElements(group.id), alice.id.rawValue, 2, carol.id.rawValue, 5)
            _ = try await redis.send("HSET", RedisKeys.roomUnseenElements(quiet.id), carol.id.rawValue, 4)
            _ = try await redis.send("HSET", RedisKeys.roomUnseenElements(notMine.id), alice.id.rawValue, 8)

            let listings = try await store.listings(of: alice.id)
            #expect(listings.map(\.room.id) == [group.id, pair.id, quiet.id])
            #expect(listings.map(\.badges) == [RoomBadges(messages: 0, elements: 2), RoomBadges(messages: 3, elements: 0), RoomBadges()])
            #expect(listings.map(\.hasUnread) == [true, true, false])
            #expect(listings[0].room.name == "Trip")
            #expect(listings[0].room.participants.map(\.id).sorted() == [alice.id, bob.id, carol.id].sorted())
            #expect(listings[0].room.updatedAt == Timestamp(milliseconds: 3_000))
            #expect(listings[0].room.createdBy == bob.id)
            #expect(listings[1].room.name == nil)

            let bobs = try await store.listings(of: bob.id)
            #expect(bobs.map(\.room.id) == [group.id, pair.id, notMine.id])
            #expect(bobs.map(\.badges.messages) == [0, 7, 0])
            #expect(try await store.listings(of: UserID.random()) == [])
        }
    }

    @Test("a listing encodes as the room's fields plus badges and hasUnread; no name is null")
    func listingShape() async throws {
        try await withTestRedis { redis, _ in
            let users = try await Self.makeUsers(redis, "alice", "bob")
            let room = try await RoomStore(redis: redis).create(by: users[0].id, with: [users[1].id], name: nil)
            _ = try await redis.send("HSET", RedisKeys.room(room.id), "messageSeq", 1)
            let listing = try #require(try await RoomStore(redis: redis).listings(of: users[0].id).first)
            let json = try Self.json(listing)
            #expect(
                Set(json.objectValue?.keys.map { $0 } ?? [])
                    == ["id", "name", "createdBy", "createdAt", "updatedAt", "isActive", "participants", "elementCount", "badges", "hasUnread"]
            )
            #expect(json["name"] == nil)
            #expect(json.objectValue?["name"] == .null)
            #expect(json["badges"] == ["messages": 1, "elements": 0])
            #expect(json["hasUnread"] == true)
            #expect(json["isActive"] == false)
            #expect(json["elementCount"] == 0)
            #expect(json["id"].stringValue == room.id.rawValue)
            #expect(json["participants"].arrayValue?.count == 2)
            #expect(json["createdAt"].stringValue == room.createdAt.description)
        }
    }

    @Test("isActive: a presence entry that expires later counts, an expired one does not")
    func isActiveFromPresence() async throws {
        try await withTestRedis { redis, _ in
            let users = try await Self.makeUsers(redis, "alice", "bob")
            let store = RoomStore(redis: redis)
            let room = try await store.create(by: users[0].id, with: [users[1].id], name: nil)
            let presence = RedisKeys.roomPresence(room.id)
            #expect(try await store.room(room.id)?.isActive == false)

            _ = try await redis.send("ZADD", presence, Self.nowMilliseconds - 1_000, "\(users[1].id)|expired")
            #expect(try await store.room(room.id)?.isActive == false)
            #expect(try await store.listings(of: users[0].id).map(\.room.isActive) == [false])
            #expect(try await store.roomsByPerson(of: users[0].id).flatMap(\.rooms).map(\.isActive) == [false])

            _ = try await redis.send("ZADD", presence, Self.nowMilliseconds + 60_000, "\(users[1].id)|live")
            #expect(try await store.room(room.id)?.isActive == true)
            #expect(try await store.room(room.id, readBy: users[0].id).isActive)
            #expect(try await store.listings(of: users[0].id).map(\.room.isActive) == [true])
            #expect(try await store.roomsByPerson(of: users[0].id).flatMap(\.rooms).map(\.isActive) == [true])
        }
    }

    @Test("rooms([...]) reads many rooms in the given order and skips missing ones")
    func bulkRooms() async throws {
        try await withTestRedis { redis, _ in
            let users = try await Self.makeUsers(redis, "alice", "bob", "carol")
            let store = RoomStore(redis: redis)
            let first = try await store.create(by: users[0].id, with: [users[1].id], name: "one")
            let second = try await store.create(by: users[2].id, with: [users[1].id], name: nil)
            let rooms = try await store.rooms([second.id, .random(), first.id])
            #expect(rooms.map(\.id) == [second.id, first.id])
            #expect(rooms.map(\.name) == [nil, "one"])
            #expect(rooms[0].participants.map(\.username).sorted() == ["bob", "carol"])
            #expect(try await store.rooms([]) == [])
        }
    }

    // MARK: rooms by person

    @Test("roomsByPerson: each other participant with the shared rooms, newest first; people by newest room")
    func groupedByPerson() async throws {
        try await withTestRedis { redis, _ in
            let users = try await Self.makeUsers(redis, "alice", "bob", "carol", "dave", "eve")
            let (alice, bob, carol, eve) = (users[0], users[1], users[2], users[4])
            let store = RoomStore(redis: redis)
            let withBob = try await store.create(by: alice.id, with: [bob.id], name: "Bob only")
            let group = try await store.create(by: bob.id, with: [alice.id, carol.id], name: nil)
            let withCarol = try await store.create(by: carol.id, with: [alice.id], name: "Carol only")
            let solo = try await store.create(by: alice.id, with: [], name: "Alone")
            let elsewhere = try await store.create(by: bob.id, with: [eve.id], name: nil)
            try await Self.setUpdatedAt(redis, withBob, 1_000)
            try await Self.setUpdatedAt(redis, group, 3_000)
            try await Self.setUpdatedAt(redis, withCarol, 5_000)
            try await Self.setUpdatedAt(redis, solo, 9_000)
            try await Self.setUpdatedAt(redis, elsewhere, 9_000)
            _ = try await redis.send("HSET", RedisKeys.room(group.id), "elementCount", 4)

            let people = try await store.roomsByPerson(of: alice.id)
            #expect(people.map(\.user) == [carol, bob])
            #expect(people[0].rooms.map(\.id) == [withCarol.id, group.id])
            #expect(people[1].rooms.map(\.id) == [group.id, withBob.id])
            let groupSummary = people[1].rooms[0]
            #expect(groupSummary.name == nil)
            #expect(groupSummary.elementCount == 4)
            #expect(groupSummary.updatedAt == Timestamp(milliseconds: 3_000))
            #expect(groupSummary.createdAt == group.createdAt)
            #expect(!groupSummary.isActive)

            let json = try Self.json(people)
            #expect(Set(json[0].objectValue?.keys.map { $0 } ?? []) == ["id", "username", "displayName", "firstName", "lastName", "avatarUrl", "createdAt", "rooms"])
            #expect(json[0]["id"].stringValue == carol.id.rawValue)
            #expect(json[0]["displayName"] == "CAROL")
            #expect(Set(json[1]["rooms"][0].objectValue?.keys.map { $0 } ?? []) == ["id", "name", "createdAt", "updatedAt", "isActive", "elementCount"])
            #expect(json[1]["rooms"][0].objectValue?["name"] == .null)
            #expect(json[1]["rooms"][1]["name"] == "Bob only")
            #expect(json[1]["rooms"][0]["updatedAt"] == "1970-01-01T00:00:03.000Z")

            // Bob sees Alice (two rooms), Eve and Carol (one each).
            let bobs = try await store.roomsByPerson(of: bob.id)
            #expect(bobs.map(\.user.username) == ["eve", "alice", "carol"])
            #expect(bobs[1].rooms.map(\.id) == [group.id, withBob.id])
            #expect(try await store.roomsByPerson(of: users[3].id) == [])
        }
    }

    @Test("people whose newest rooms were updated at the same time are ordered by username")
    func groupedTie() async throws {
        try await withTestRedis { redis, _ in
            let users = try await Self.makeUsers(redis, "alice", "zed", "bob")
            let store = RoomStore(redis: redis)
            let group = try await store.create(by: users[0].id, with: [users[1].id, users[2].id], name: nil)
            let people = try await store.roomsByPerson(of: users[0].id)
            #expect(people.map(\.user.username) == ["bob", "zed"])
            #expect(people.map { $0.rooms.map(\.id) } == [[group.id], [group.id]])
        }
    }

    @Test("partners: everyone sharing a room with the user, the user excluded")
    func partners() async throws {
        try await withTestRedis { redis, _ in
            let users = try await Self.makeUsers(redis, "alice", "bob", "carol", "dave")
            let store = RoomStore(redis: redis)
            _ = try await store.create(by: users[0].id, with: [users[1].id], name: nil)
            _ = try await store.create(by: users[2].id, with: [users[0].id, users[1].id], name: nil)
            _ = try await store.create(by: users[3].id, with: [users[1].id], name: nil)
            #expect(try await store.partners(of: users[0].id) == [users[1].id, users[2].id])
            #expect(try await store.partners(of: users[3].id) == [users[1].id])
            #expect(try await store.partners(of: .random()) == [])
        }
    }

    // MARK: rename

    @Test("a rename through RoomChanges sets the name, moves updatedAt and sends room:updated to every participant")
    func renamePublishes() async throws {
        try await withTestRedis { redis, server in
            let users = try await Self.makeUsers(redis, "alice", "bob", "eve")
            let store = RoomStore(redis: redis)
            let room = try await store.create(by: users[0].id, with: [users[1].id], name: nil)
            try await Self.setUpdatedAt(redis, room, 1_000)
            let channels = users.map { RedisKeys.userChannel($0.id) }
            try await withSubscriber(server, to: channels) { inbox in
                let renamed = try await RoomChanges(redis: redis).renameRoom(room.id, to: "  Italian engagement 2025 ", by: users[1].id)
                #expect(renamed.name == "Italian engagement 2025")
                #expect(renamed.updatedAt > Timestamp(milliseconds: 1_000))
                #expect(renamed.createdAt == room.createdAt)
                #expect(Set(renamed.participants) == Set(room.participants))
                #expect(try await store.room(room.id) == renamed)
                let fields = try await redis.send("HGETALL", RedisKeys.room(room.id)).fields
                #expect(fields["name"] == "Italian engagement 2025")
                #expect(fields["updatedAt"] == String(renamed.updatedAt.milliseconds))

                try await TestNode.publish("marker", on: channels[2], in: redis)
                let received = try await inbox.wait { messages in
                    messages.contains { $0.channel == channels[2] } && messages.filter { $0.channel != channels[2] }.count >= 2
                }
                #expect(received.filter { $0.channel == channels[2] }.map { String(buffer: $0.payload) } == ["marker"])
                for channel in channels.prefix(2) {
                    let messages = received.filter { $0.channel == channel }
                    try #require(messages.count == 1, "\(channel)")
                    let envelope = try #require(EventEnvelope(payload: messages[0].payload))
                    #expect(envelope.offset.flatMap(StreamOffset.init) != nil, "an offset of the user's stream")
                    let decoded = try DecodedEvent<RoomUpdated>(frame: envelope.frame)
                    #expect(decoded.name == "room:updated")
                    #expect(decoded.payload.room == renamed)
                }
            }
        }
    }

    @Test("an empty or blank name clears it: stored empty, read and sent as null", arguments: ["", "   ", "\n\t", nil])
    func renameClears(_ name: String?) async throws {
        try await withTestRedis { redis, server in
            let users = try await Self.makeUsers(redis, "alice", "bob")
            let store = RoomStore(redis: redis)
            let room = try await store.create(by: users[0].id, with: [users[1].id], name: "Old")
            try await withSubscriber(server, to: [RedisKeys.userChannel(users[1].id)]) { inbox in
                let cleared = try await RoomChanges(redis: redis).renameRoom(room.id, to: name, by: users[0].id)
                #expect(cleared.name == nil)
                #expect(try await redis.send(RedisCommand("HGET", RedisKeys.room(room.id), "name"), as: String.self) == "")
                #expect(try await store.room(room.id)?.name == nil)
                let message = try await inbox.wait(for: 1)[0]
                let envelope = try #require(EventEnvelope(payload: message.payload))
                let parsed = try ParsedEventFrame(envelope.frame)
                let roomObject = try #require(parsed.payload["room"] as? [String: Any])
                #expect(roomObject.keys.contains("name"))
                #expect(roomObject["name"] is NSNull)
            }
        }
    }

    @Test("names: 100 characters pass, 101 or more than 800 bytes are invalid_payload and change nothing")
    func renameLength() async throws {
        try await withTestRedis { redis, _ in
            let users = try await Self.makeUsers(redis, "alice", "bob")
            let store = RoomStore(redis: redis)
            let room = try await store.create(by: users[0].id, with: [users[1].id], name: "Keep")
            let before = try await store.room(room.id)
            await expectRoomcastError(.invalidPayload) { try await store.rename(room.id, to: String(repeating: "x", count: 101), by: users[0].id) }
            #expect(try await store.room(room.id) == before)
            #expect(before?.name == "Keep")
            // One character of 801 bytes (a letter and 400 combining marks) is too long too.
            await expectRoomcastError(.invalidPayload) { try await store.rename(room.id, to: "a" + String(repeating: "\u{0301}", count: 400), by: users[0].id) }
            // Characters as people count them: 100 flags are 100 characters, 800 bytes.
            let flags = String(repeating: "🇮🇹", count: 100)
            #expect(try await store.rename(room.id, to: flags, by: users[0].id).name == flags)
            let hundred = String(repeating: "y", count: 100)
            #expect(try await store.rename(room.id, to: hundred, by: users[0].id).name == hundred)
        }
    }

    @Test("only participants rename: outsiders forbidden, unknown rooms not_found, nothing written")
    func renameRefusals() async throws {
        try await withTestRedis { redis, _ in
            let users = try await Self.makeUsers(redis, "alice", "bob", "eve")
            let store = RoomStore(redis: redis)
            let room = try await store.create(by: users[0].id, with: [users[1].id], name: "Ours")
            let before = try await store.room(room.id)
            await expectRoomcastError(.forbidden) { try await store.rename(room.id, to: "Mine now", by: users[2].id) }
            await expectRoomcastError(.forbidden) { try await store.rename(room.id, to: "Mine now", by: .random()) }
            let missing = RoomID.random()
            await expectRoomcastError(.notFound) { try await store.rename(missing, to: "x", by: users[0].id) }
            #expect(try await store.room(room.id) == before)
            #expect(try await redis.send(RedisCommand("EXISTS", RedisKeys.room(missing)), as: Int.self) == 0)
        }
    }

    // MARK: users without rooms

    @Test("create lists every account in the users index, scored by createdAt")
    func userIndex() async throws {
        try await withTestRedis { redis, _ in
            let users = try await Self.makeUsers(redis, "alice", "bob")
            let index = try await redis.send(RedisCommand("ZRANGE", RedisKeys.allUsers, 0, -1, "WITHSCORES"), as: [String].self)
            #expect(Set(stride(from: 0, to: index.count, by: 2).map { index[$0] }) == Set(users.map(\.id.rawValue)))
            for user in users {
                #expect(
                    try await redis.send(RedisCommand("ZSCORE", RedisKeys.allUsers, user.id.rawValue), as: String.self)
                        == String(user.createdAt.milliseconds)
                )
            }
            // A refused name adds nothing.
            await expectRoomcastError(.conflict) { try await UserStore(redis: redis).create(username: "ALICE", passwordHash: "h", displayName: nil) }
            #expect(try await redis.send(RedisCommand("ZCARD", RedisKeys.allUsers), as: Int.self) == 2)
        }
    }

    /// Writes an account directly with a chosen `createdAt`, as `UserStore.create` would.
    static func seedUser(_ redis: any RedisClientProtocol, _ name: String, id: String? = nil, createdAt: Int) async throws -> User {
        let user = User(id: UserID(id ?? UserID.random().rawValue)!, username: name, createdAt: Timestamp(milliseconds: Int64(createdAt)))
        _ = try await redis.send(
            "HSET", RedisKeys.user(user.id), "id", user.id.rawValue, "username", name, "passwordHash", "h", "createdAt", createdAt
        )
        _ = try await redis.send("ZADD", RedisKeys.allUsers, createdAt, user.id.rawValue)
        return user
    }

    /// Every page from the start, with `limit`, leaving out `excluded`.
    static func allPages(_ store: UserStore, limit: Int, excluding excluded: Set<UserID>) async throws -> [UserPage] {
        var pages: [UserPage] = []
        var cursor: UserCursor?
        repeat {
            let page = try await store.page(after: cursor, limit: limit, excluding: excluded)
            pages.append(page)
            cursor = page.nextCursor
        } while cursor != nil && pages.count < 100
        return pages
    }

    @Test("pages walk the index oldest first, leave out the excluded, and end with no cursor")
    func paging() async throws {
        try await withTestRedis { redis, _ in
            var seeded: [User] = []
            for index in 0..<8 { seeded.append(try await Self.seedUser(redis, "user\(index)", createdAt: 1_000 + index * 10)) }
            let store = UserStore(redis: redis)
            let excluded: Set<UserID> = [seeded[0].id, seeded[3].id]
            let expected = seeded.filter { !excluded.contains($0.id) }

            let pages = try await Self.allPages(store, limit: 2, excluding: excluded)
            #expect(pages.map(\.users) == [Array(expected[0..<2]), Array(expected[2..<4]), Array(expected[4..<6])])
            #expect(pages.map { $0.nextCursor == nil } == [false, false, true])
            #expect(pages[0].nextCursor == UserCursor(createdAt: 1_020, id: seeded[2].id))

            #expect(try await Self.allPages(store, limit: 6, excluding: excluded).map(\.users) == [expected])
            #expect(try await Self.allPages(store, limit: 5, excluding: excluded).map(\.users.count) == [5, 1])
            #expect(try await Self.allPages(store, limit: 100, excluding: Set(seeded.map(\.id))).map(\.users) == [[]])
            // A cursor past the end is an empty last page.
            let past = try await store.page(after: UserCursor(createdAt: 99_999, id: seeded[0].id), limit: 3, excluding: [])
            #expect(past == UserPage(accounts: [], nextCursor: nil))
        }
    }

    @Test("a user registering mid-paging appears once, at the end; nobody repeats or goes missing")
    func pagingStableUnderInserts() async throws {
        try await withTestRedis { redis, _ in
            var seeded: [User] = []
            for index in 0..<6 { seeded.append(try await Self.seedUser(redis, "user\(index)", createdAt: 1_000 + index)) }
            let store = UserStore(redis: redis)
            let first = try await store.page(after: nil, limit: 2, excluding: [])
            #expect(first.users == Array(seeded[0..<2]))
            let late = try await UserStore(redis: redis).create(username: "latecomer", passwordHash: "h", displayName: nil)
            // One created with an earlier time (another node's clock behind) lands before the cursor: not seen.
            _ = try await Self.seedUser(redis, "early", createdAt: 500)
            let second = try await store.page(after: first.nextCursor, limit: 2, excluding: [])
            #expect(second.users == Array(seeded[2..<4]))
            let third = try await store.page(after: second.nextCursor, limit: 3, excluding: [])
            #expect(third.users == Array(seeded[4..<6]) + [late])
            #expect(third.nextCursor == nil)
        }
    }

    @Test("users created in the same millisecond page by id, however many there are")
    func pagingEqualScores() async throws {
        try await withTestRedis { redis, _ in
            var seeded: [User] = []
            // More than one read's worth (limit + 1 + excluded), all with one score.
            for index in 0..<40 {
                seeded.append(try await Self.seedUser(redis, "same\(index)", id: String(format: "id%03d", 39 - index), createdAt: 7_000))
            }
            seeded.sort { $0.id.rawValue < $1.id.rawValue }
            let store = UserStore(redis: redis)
            let excluded = Set(seeded.prefix(20).map(\.id))
            let pages = try await Self.allPages(store, limit: 3, excluding: excluded)
            #expect(pages.flatMap(\.users) == Array(seeded[20...]))
            #expect(pages.count == 7)
            #expect(pages.dropLast().allSatisfy { $0.users.count == 3 })
        }
    }

    @Test("an index entry without an account is skipped")
    func pagingSkipsMissingAccounts() async throws {
        try await withTestRedis { redis, _ in
            let alice = try await Self.seedUser(redis, "alice", createdAt: 1_000)
            _ = try await redis.send("ZADD", RedisKeys.allUsers, 1_001, "ghost")
            let bob = try await Self.seedUser(redis, "bob", createdAt: 1_002)
            let page = try await UserStore(redis: redis).page(after: nil, limit: 10, excluding: [])
            #expect(page.users == [alice, bob])
        }
    }

    @Test("cursors are opaque base64url that round-trip")
    func cursorRoundTrip() throws {
        let cursor = UserCursor(createdAt: 1_763_800_000_123, id: UserID("a_b-c9")!)
        let text = cursor.encoded
        #expect(text.allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" })
        #expect(!text.contains("="))
        #expect(try UserCursor(encoded: text) == cursor)
        for id in ["x", "yy", "zzz", String(repeating: "q", count: 64)] {
            let other = UserCursor(createdAt: 0, id: UserID(id)!)
            #expect(try UserCursor(encoded: other.encoded) == other)
        }
    }

    @Test(
        "a cursor the server did not give out is invalid_payload",
        arguments: ["!!!", "a b", "Zm9v", "MTIzOg", "OmFiYw", "LTE6YWJj", "MTI6YSBi", "MTI6YWJjOg", String(repeating: "A", count: 200), "MTI6YWJj="]
    )
    func badCursors(_ text: String) {
        #expect(throws: RoomcastError.self) { try UserCursor(encoded: text) }
        do {
            _ = try UserCursor(encoded: text)
        } catch {
            #expect(error.code == .invalidPayload)
        }
    }
}
