import Foundation
import NIOCore
import RedisClient
import RoomcastCore
import RoomcastTestSupport
import Testing

/// ReactionStore on a real Redis: hearts, stats per recipient, the published per-recipient
/// events, and elements' `reactions` (docs/clients/events.md).
@Suite("ReactionStore against a real redis-server")
struct ReactionStoreTests {
    struct Fixture: Sendable {
        var alice: User
        var bob: User
        var eve: User
        var room: RoomID
        var element: Element
        var elements: ElementStore
        var reactions: ReactionStore

        var channel: String { RedisKeys.roomChannel(room) }
        var reactionsKey: String { RedisKeys.elementReactions(element.id, in: room) }
    }

    /// Alice and Bob share a room with one note of Alice's; Eve is in no room.
    static func fixture(_ redis: any RedisClientProtocol) async throws -> Fixture {
        let users = UserStore(redis: redis)
        let alice = try await users.create(username: "alice", passwordHash: "h", displayName: "Alice")
        let bob = try await users.create(username: "bob", passwordHash: "h", displayName: nil)
        let eve = try await users.create(username: "eve", passwordHash: "h", displayName: nil)
        let room = try await RoomStore(redis: redis).create(by: alice.id, with: [bob.id], name: nil)
        let elements = ElementStore(redis: redis)
        let element = try await elements.create(try ElementStoreTests.note(), by: alice, in: room.id)
        return Fixture(alice: alice, bob: bob, eve: eve, room: room.id, element: element, elements: elements, reactions: ReactionStore(redis: redis))
    }

    static func element(_ store: ElementStore, _ id: ElementID, in room: RoomID, for viewer: UserID) async throws -> Element {
        try #require(try await store.snapshot(of: room, for: viewer).elements.first { $0.id == id })
    }

    /// The element's `reactions` exactly as the snapshot JSON shows them to `viewer`.
    static func reactionsJSON(_ store: ElementStore, _ id: ElementID, in room: RoomID, for viewer: UserID) async throws -> JSONValue {
        let snapshot = try JSONValue(String(buffer: try await store.snapshot(of: room, for: viewer).json))
        let element = try #require(snapshot.arrayValue?.first { $0["id"].stringValue == id.rawValue })
        #expect(element.objectValue?.keys.contains("reactions") == true)
        return element["reactions"]
    }

    static func users(_ users: [User]) throws -> JSONValue {
        .array(try users.map(LiveFixture.json))
    }

    /// `stats` / `elementStats` as JSON.
    static func stats(_ total: Int, _ hasReacted: Bool, _ top: [User]) throws -> JSONValue {
        ["totalReactions": .number(Double(total)), "hasReacted": .bool(hasReacted), "topReactors": try users(top)]
    }

    /// An element's `reactions` as JSON for a viewer.
    static func reactions(_ count: Int, _ hasReacted: Bool, _ top: [User]) throws -> JSONValue {
        ["count": .number(Double(count)), "hasReacted": .bool(hasReacted), "userReaction": hasReacted ? "heart" : nil, "topReactors": try users(top)]
    }

    /// `GET .../reactions` data as JSON.
    static func list(_ reactions: [Reaction], _ total: Int, _ hasReacted: Bool) throws -> JSONValue {
        ["reactions": .array(try reactions.map(LiveFixture.json)), "total": .number(Double(total)), "hasReacted": .bool(hasReacted)]
    }

    // MARK: Toggle

    @Test("a first heart: added, stored, stats for the toggler, and reactions on the element for each viewer")
    func add() async throws {
        try await withTestRedis { redis, _ in
            let f = try await Self.fixture(redis)
            let start = Timestamp.now().milliseconds
            let toggle = try await f.reactions.toggle(on: f.element.id, by: f.bob, in: f.room)
            #expect(toggle.action == "added")
            #expect(toggle.reaction.elementId == f.element.id)
            #expect(toggle.reaction.userId == f.bob.id)
            #expect(toggle.reaction.type == "heart")
            #expect(toggle.reaction.user == f.bob)
            #expect(!toggle.reaction.id.isEmpty)
            #expect(toggle.reaction.createdAt.milliseconds >= start && toggle.reaction.createdAt.milliseconds <= Timestamp.now().milliseconds)
            #expect(try LiveFixture.json(toggle.elementStats) == (try Self.stats(1, true, [f.bob])))

            // The answer's JSON is seed 001's shape.
            let json = try LiveFixture.json(toggle)
            #expect(json.keys == ["action", "reaction", "elementStats"])
            #expect(json["action"] == "added")
            #expect(json["reaction"].keys == ["id", "elementId", "userId", "type", "createdAt", "user"])
            #expect(json["reaction"]["type"] == "heart")
            #expect(json["reaction"]["createdAt"].stringValue?.wholeMatch(of: /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/) != nil)
            #expect(json["elementStats"] == ["totalReactions": 1, "hasReacted": true, "topReactors": try Self.users([f.bob])])

            // One hash field per user, holding the reaction.
            let stored = try await LiveFixture.hash(redis, f.reactionsKey)
            #expect(Set(stored.keys) == [f.bob.id.rawValue])
            #expect(try JSONValue(try #require(stored[f.bob.id.rawValue])) == json["reaction"])

            // Bob sees his own heart; Alice sees one heart that is not hers.
            #expect(
                try await Self.reactionsJSON(f.elements, f.element.id, in: f.room, for: f.bob.id)
                    == ["count": 1, "hasReacted": true, "userReaction": "heart", "topReactors": try Self.users([f.bob])]
            )
            #expect(
                try await Self.reactionsJSON(f.elements, f.element.id, in: f.room, for: f.alice.id)
                    == ["count": 1, "hasReacted": false, "userReaction": nil, "topReactors": try Self.users([f.bob])]
            )
            let seenByAlice = try await Self.element(f.elements, f.element.id, in: f.room, for: f.alice.id)
            #expect(seenByAlice.reactions == (try LiveFixture.decode(ElementReactions.self, Self.reactions(1, false, [f.bob]))))
        }
    }

    @Test("toggling twice by the same user returns to zero: removed, key gone, reactions back to null")
    func addThenRemove() async throws {
        try await withTestRedis { redis, _ in
            let f = try await Self.fixture(redis)
            let added = try await f.reactions.toggle(on: f.element.id, by: f.bob, in: f.room)
            let removed = try await f.reactions.toggle(on: f.element.id, by: f.bob, in: f.room)
            #expect(removed.action == "removed")
            #expect(removed.reaction == added.reaction)
            #expect(try LiveFixture.json(removed.elementStats) == (try Self.stats(0, false, [])))
            #expect(try LiveFixture.json(removed)["elementStats"] == ["totalReactions": 0, "hasReacted": false, "topReactors": []])
            #expect(try await redis.send(RedisCommand("EXISTS", f.reactionsKey), as: Int.self) == 0)
            for viewer in [f.alice.id, f.bob.id] {
                #expect(try await Self.reactionsJSON(f.elements, f.element.id, in: f.room, for: viewer) == .null)
                #expect(try await Self.element(f.elements, f.element.id, in: f.room, for: viewer).reactions == nil)
            }
            let list = try await f.reactions.reactions(on: f.element.id, in: f.room, for: f.bob.id)
            #expect(try LiveFixture.json(list) == (try Self.list([], 0, false)))

            // And again: a new reaction (a new id), count 1.
            let again = try await f.reactions.toggle(on: f.element.id, by: f.bob, in: f.room)
            #expect(again.action == "added")
            #expect(again.reaction.id != added.reaction.id)
            #expect(again.elementStats.totalReactions == 1)
        }
    }

    @Test("50 concurrent toggles by 50 distinct users give exactly 50 hearts; 50 more take them all away")
    func concurrentToggles() async throws {
        try await withTestRedis(poolSize: 8) { redis, server in
            let users = try await LiveFixture.users(redis, 50, prefix: "crowd")
            // The store takes any number of participants (the 16 limit is the REST route's).
            let room = try await RoomStore(redis: redis).create(by: users[0].id, with: users.dropFirst().map(\.id), name: nil)
            let elements = ElementStore(redis: redis)
            let element = try await elements.create(try ElementStoreTests.note(), by: users[0], in: room.id)
            let reactions = ReactionStore(redis: redis)
            try await withSubscriber(server, to: [RedisKeys.roomChannel(room.id)]) { inbox in
                let results = try await withThrowingTaskGroup(of: ReactionToggle.self) { group in
                    for user in users {
                        group.addTask { try await reactions.toggle(on: element.id, by: user, in: room.id) }
                    }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
                #expect(results.allSatisfy { $0.action == "added" && $0.elementStats.hasReacted })
                // Atomic: each toggle saw its own count, 1 through 50 exactly once.
                #expect(results.map(\.elementStats.totalReactions).sorted() == Array(1...50))
                #expect(Set(results.map(\.reaction.userId)) == Set(users.map(\.id)))
                #expect(try await redis.send(RedisCommand("HLEN", RedisKeys.elementReactions(element.id, in: room.id)), as: Int.self) == 50)
                let seen = try await Self.element(elements, element.id, in: room.id, for: users[7].id)
                #expect(seen.reactions?.count == 50)
                #expect(seen.reactions?.hasReacted == true)
                #expect(seen.reactions?.topReactors.count == 3)
                #expect(try await reactions.reactions(on: element.id, in: room.id, for: users[0].id).total == 50)

                // Published in the order applied: totals 1…50 with increasing offsets.
                let published = try await inbox.publications(50)
                #expect(published.allSatisfy { $0.name == "element:reaction:added" })
                let totals = try published.map { try $0.event().payload["stats"]["totalReactions"].intValue }
                #expect(totals == Array(1...50).map { Optional($0) })
                let offsets = published.compactMap { $0.offset.flatMap(StreamOffset.init) }
                #expect(offsets.count == 50)
                #expect(zip(offsets, offsets.dropFirst()).allSatisfy { $0 < $1 })
                // Each event lists exactly the users who had reacted by then.
                for publication in published {
                    let total = try publication.event().payload["stats"]["totalReactions"].intValue
                    #expect(publication.envelope.listedUsers.count == total)
                }

                let removals = try await withThrowingTaskGroup(of: ReactionToggle.self) { group in
                    for user in users {
                        group.addTask { try await reactions.toggle(on: element.id, by: user, in: room.id) }
                    }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
                #expect(removals.allSatisfy { $0.action == "removed" && !$0.elementStats.hasReacted })
                #expect(removals.map(\.elementStats.totalReactions).sorted() == Array(0..<50))
                #expect(try await redis.send(RedisCommand("EXISTS", RedisKeys.elementReactions(element.id, in: room.id)), as: Int.self) == 0)
                #expect(try await Self.element(elements, element.id, in: room.id, for: users[7].id).reactions == nil)
            }
        }
    }

    @Test("topReactors: the most recent reactors first, at most 3, in the answer, the event, the element and the list")
    func topReactors() async throws {
        try await withTestRedis { redis, server in
            let f = try await Self.fixture(redis)
            let more = try await LiveFixture.users(redis, 2, prefix: "extra")
            let carol = more[0]
            let dave = more[1]
            _ = try await redis.send("SADD", RedisKeys.roomParticipants(f.room), carol.id.rawValue, dave.id.rawValue)
            try await withSubscriber(server, to: [f.channel]) { inbox in
                var last: ReactionToggle?
                for (index, user) in [f.alice, f.bob, carol, dave].enumerated() {
                    last = try await f.reactions.toggle(on: f.element.id, by: user, in: f.room)
                    let expected = Array([f.alice, f.bob, carol, dave][...index].reversed().prefix(3))
                    #expect(last?.elementStats.topReactors == expected, "after \(user.username)")
                }
                #expect(try LiveFixture.json(try #require(last).elementStats) == (try Self.stats(4, true, [dave, carol, f.bob])))
                let fourth = try #require(try await inbox.publications(4).last)
                #expect(try fourth.event(for: f.alice.id).payload["stats"]["topReactors"] == (try Self.users([dave, carol, f.bob])))

                // Carol takes hers back: Alice moves up into the three.
                let removed = try await f.reactions.toggle(on: f.element.id, by: carol, in: f.room)
                #expect(try LiveFixture.json(removed.elementStats) == (try Self.stats(3, false, [dave, f.bob, f.alice])))
                // Carol again: the most recent now.
                let readded = try await f.reactions.toggle(on: f.element.id, by: carol, in: f.room)
                #expect(readded.elementStats.topReactors == [carol, dave, f.bob])

                let element = try await Self.element(f.elements, f.element.id, in: f.room, for: f.alice.id)
                #expect(element.reactions == (try LiveFixture.decode(ElementReactions.self, Self.reactions(4, true, [carol, dave, f.bob]))))

                let list = try await f.reactions.reactions(on: f.element.id, in: f.room, for: f.alice.id)
                #expect(list.total == 4)
                #expect(list.hasReacted)
                #expect(list.reactions.map(\.userId) == [carol.id, dave.id, f.bob.id, f.alice.id])
                #expect(list.reactions.first == readded.reaction)
                let listJSON = try LiveFixture.json(list)
                #expect(listJSON.keys == ["reactions", "total", "hasReacted"])
            }
        }
    }

    @Test("createdAt follows the order toggles are applied in: later than every heart already there, across calendar boundaries")
    func createdAtIsMonotonic() async throws {
        try await withTestRedis { redis, _ in
            let f = try await Self.fixture(redis)
            // Hearts stamped by a node whose clock runs ahead (or in the same millisecond).
            for (stamp, next) in [
                ("2028-02-29T23:59:59.999Z", "2028-03-01T00:00:00.000Z"), ("2099-12-31T23:59:59.999Z", "2100-01-01T00:00:00.000Z"),
                ("2100-02-28T23:59:59.999Z", "2100-03-01T00:00:00.000Z"), ("2400-02-28T10:20:30.456Z", "2400-02-28T10:20:30.457Z"),
            ] {
                _ = try await redis.send("DEL", f.reactionsKey)
                let ahead = #"{"id":"r0","elementId":"\#(f.element.id)","userId":"\#(f.alice.id)","type":"heart","createdAt":"\#(stamp)","user":\#(String(buffer: try JSONCoding.encode(f.alice)))}"#
                _ = try await redis.send("HSET", f.reactionsKey, f.alice.id.rawValue, ahead)
                let toggle = try await f.reactions.toggle(on: f.element.id, by: f.bob, in: f.room)
                #expect(toggle.reaction.createdAt.description == next)
                #expect(try LiveFixture.json(toggle.elementStats) == (try Self.stats(2, true, [f.bob, f.alice])))
                _ = try await f.reactions.toggle(on: f.element.id, by: f.bob, in: f.room)
            }
            // Many hearts in a burst: strictly increasing, in the order applied.
            _ = try await redis.send("DEL", f.reactionsKey)
            let crowd = try await LiveFixture.users(redis, 6, prefix: "burst")
            _ = try await redis.send(RedisCommand("SADD", [RedisKeys.roomParticipants(f.room)] + crowd.map { $0.id.rawValue as any RedisArgument }))
            var stamps: [Timestamp] = []
            for user in crowd {
                let toggle = try await f.reactions.toggle(on: f.element.id, by: user, in: f.room)
                stamps.append(toggle.reaction.createdAt)
                #expect(toggle.elementStats.topReactors == Array(crowd[...stamps.indices.last!].reversed().prefix(3)))
            }
            #expect(zip(stamps, stamps.dropFirst()).allSatisfy { $0 < $1 })
            #expect(stamps.last!.milliseconds <= Timestamp.now().milliseconds + Int64(crowd.count))
        }
    }

    // MARK: Published events

    @Test("element:reaction:added carries two frames and the reactors: hasReacted true for reactors only")
    func addedEventPerRecipient() async throws {
        try await withTestRedis { redis, server in
            let f = try await Self.fixture(redis)
            try await withSubscriber(server, to: [f.channel]) { inbox in
                let bobs = try await f.reactions.toggle(on: f.element.id, by: f.bob, in: f.room)
                let publication = try #require(try await inbox.publications(1).first)
                #expect(publication.channel == f.channel)
                #expect(publication.isPerRecipient)
                #expect(publication.envelope.listedUsers == [Substring(f.bob.id.rawValue)])
                let offset = try #require(publication.offset)
                #expect(offset == (try await ElementStoreTests.lastStreamID(redis, f.room)))
                // The raw header: `<offset> @<ids> <length> `.
                #expect(publication.raw.hasPrefix("\(offset) @\(f.bob.id) "))

                let atBob = try publication.event(for: f.bob.id)
                let atAlice = try publication.event(for: f.alice.id)
                let atStranger = try publication.event()
                #expect(atBob.name == "element:reaction:added")
                #expect(atAlice.name == "element:reaction:added")
                let reaction = try LiveFixture.json(bobs.reaction)
                #expect(
                    atBob.payload == [
                        "roomId": .string(f.room.rawValue), "elementId": .string(f.element.id.rawValue), "reaction": reaction,
                        "stats": ["totalReactions": 1, "hasReacted": true, "topReactors": try Self.users([f.bob])], "offset": .string(offset),
                    ]
                )
                #expect(
                    atAlice.payload == [
                        "roomId": .string(f.room.rawValue), "elementId": .string(f.element.id.rawValue), "reaction": reaction,
                        "stats": ["totalReactions": 1, "hasReacted": false, "topReactors": try Self.users([f.bob])], "offset": .string(offset),
                    ]
                )
                #expect(atStranger.payload == atAlice.payload)

                // Alice reacts too: both listed, both see true; a third participant would see false.
                let alices = try await f.reactions.toggle(on: f.element.id, by: f.alice, in: f.room)
                let second = try #require(try await inbox.publications(2).last)
                #expect(second.envelope.listedUsers == [Substring(f.bob.id.rawValue), Substring(f.alice.id.rawValue)])
                for user in [f.alice.id, f.bob.id] {
                    let event = try second.event(for: user)
                    #expect(event.payload["stats"] == ["totalReactions": 2, "hasReacted": true, "topReactors": try Self.users([f.alice, f.bob])])
                    #expect(event.payload["reaction"] == (try LiveFixture.json(alices.reaction)))
                }
                #expect(try second.event(for: f.eve.id).payload["stats"]["hasReacted"] == false)
                #expect(StreamOffset(try #require(second.offset))! > StreamOffset(offset)!)

                // The stream keeps both frames, their suffix and the listed users.
                let entry = try #require(try StreamEntry.entries(try await redis.send("XREVRANGE", RedisKeys.roomStream(f.room), "+", "-", "COUNT", 1)).first)
                #expect(entry.id == second.offset)
                #expect(Set(entry.fields.keys) == ["pa", "pb", "s", "u"])
                #expect(Set((entry.fields["u"] ?? "").split(separator: ",")) == [Substring(f.alice.id.rawValue), Substring(f.bob.id.rawValue)])
                #expect((entry.fields["pa"] ?? "") + second.offset! + (entry.fields["s"] ?? "") == String(buffer: second.envelope.frame(for: f.bob.id.rawValue)))
                #expect((entry.fields["pb"] ?? "") + second.offset! + (entry.fields["s"] ?? "") == String(buffer: second.envelope.frame))
            }
        }
    }

    @Test("element:reaction:removed carries userId and stats; remaining reactors see hasReacted true, the remover false")
    func removedEventPerRecipient() async throws {
        try await withTestRedis { redis, server in
            let f = try await Self.fixture(redis)
            _ = try await f.reactions.toggle(on: f.element.id, by: f.alice, in: f.room)
            _ = try await f.reactions.toggle(on: f.element.id, by: f.bob, in: f.room)
            try await withSubscriber(server, to: [f.channel]) { inbox in
                _ = try await f.reactions.toggle(on: f.element.id, by: f.bob, in: f.room)
                let publication = try #require(try await inbox.publications(1).first)
                let offset = try #require(publication.offset)
                #expect(publication.envelope.listedUsers == [Substring(f.alice.id.rawValue)])
                let base: JSONValue = ["roomId": .string(f.room.rawValue), "elementId": .string(f.element.id.rawValue), "userId": .string(f.bob.id.rawValue), "offset": .string(offset)]
                let atAlice = try publication.event(for: f.alice.id)
                let atBob = try publication.event(for: f.bob.id)
                #expect(atAlice.name == "element:reaction:removed")
                var expected = base.objectValue!
                expected["stats"] = ["totalReactions": 1, "hasReacted": true, "topReactors": try Self.users([f.alice])]
                #expect(atAlice.payload == .object(expected))
                expected["stats"] = ["totalReactions": 1, "hasReacted": false, "topReactors": try Self.users([f.alice])]
                #expect(atBob.payload == .object(expected))

                // The last heart goes: nobody is listed, everyone sees zero.
                _ = try await f.reactions.toggle(on: f.element.id, by: f.alice, in: f.room)
                let last = try #require(try await inbox.publications(2).last)
                #expect(last.envelope.listedUsers.isEmpty)
                for user in [f.alice.id, f.bob.id] {
                    let event = try last.event(for: user)
                    #expect(event.name == "element:reaction:removed")
                    #expect(event.payload["userId"].stringValue == f.alice.id.rawValue)
                    #expect(event.payload["stats"] == ["totalReactions": 0, "hasReacted": false, "topReactors": []])
                    #expect(event.payload.keys == ["roomId", "elementId", "userId", "stats", "offset"])
                }
            }
        }
    }

    @Test("element:transformed of an element with hearts is per recipient; without hearts one frame with reactions null")
    func transformedPerRecipient() async throws {
        try await withTestRedis { redis, server in
            let f = try await Self.fixture(redis)
            try await withSubscriber(server, to: [f.channel]) { inbox in
                let plain = try await f.elements.transform(f.element.id, with: try ElementStoreTests.transform(#"{"rotation":10}"#), by: f.alice.id, in: f.room)
                #expect(plain.reactions == nil)
                let first = try #require(try await inbox.publications(1).first)
                #expect(!first.isPerRecipient)
                #expect(try first.event().payload["element"]["reactions"] == .null)

                _ = try await f.reactions.toggle(on: f.element.id, by: f.bob, in: f.room)
                // The transformer's answer shows the transformer's view (Alice: not reacted).
                let transformed = try await f.elements.transform(f.element.id, with: try ElementStoreTests.transform(#"{"scaleX":2}"#), by: f.alice.id, in: f.room)
                #expect(transformed.reactions == (try LiveFixture.decode(ElementReactions.self, Self.reactions(1, false, [f.bob]))))
                let byBob = try await f.elements.transform(f.element.id, with: try ElementStoreTests.transform(#"{"scaleY":3}"#), by: f.bob.id, in: f.room)
                #expect(byBob.reactions == (try LiveFixture.decode(ElementReactions.self, Self.reactions(1, true, [f.bob]))))

                let published = try await inbox.publications(4)
                let event = published[2]
                #expect(event.name == "element:transformed")
                #expect(event.isPerRecipient)
                #expect(event.envelope.listedUsers == [Substring(f.bob.id.rawValue)])
                let atBob = try event.event(for: f.bob.id).payload
                let atAlice = try event.event(for: f.alice.id).payload
                #expect(atBob["element"]["reactions"] == ["count": 1, "hasReacted": true, "userReaction": "heart", "topReactors": try Self.users([f.bob])])
                #expect(atAlice["element"]["reactions"] == ["count": 1, "hasReacted": false, "userReaction": nil, "topReactors": try Self.users([f.bob])])
                #expect(atAlice.objectValue?.keys.sorted() == ["element", "offset", "roomId"])
                #expect(atAlice["roomId"] == .string(f.room.rawValue) && atAlice["offset"] == .string(event.offset ?? ""))
                #expect(try LiveFixture.decode(Element.self, atAlice["element"]) == transformed)
                #expect(try LiveFixture.decode(Element.self, published[3].event(for: f.bob.id).payload["element"]) == byBob)
            }
        }
    }

    // MARK: Listing and refusals

    @Test("GET reactions: newest first, total, hasReacted for the caller")
    func list() async throws {
        try await withTestRedis { redis, _ in
            let f = try await Self.fixture(redis)
            let empty = try await f.reactions.reactions(on: f.element.id, in: f.room, for: f.alice.id)
            #expect(try LiveFixture.json(empty) == (try Self.list([], 0, false)))
            let first = try await f.reactions.toggle(on: f.element.id, by: f.alice, in: f.room)
            let second = try await f.reactions.toggle(on: f.element.id, by: f.bob, in: f.room)
            let forAlice = try await f.reactions.reactions(on: f.element.id, in: f.room, for: f.alice.id)
            #expect(try LiveFixture.json(forAlice) == (try Self.list([second.reaction, first.reaction], 2, true)))
            _ = try await f.reactions.toggle(on: f.element.id, by: f.alice, in: f.room)
            let forBob = try await f.reactions.reactions(on: f.element.id, in: f.room, for: f.bob.id)
            #expect(try LiveFixture.json(forBob) == (try Self.list([second.reaction], 1, true)))
            let forAliceAgain = try await f.reactions.reactions(on: f.element.id, in: f.room, for: f.alice.id)
            #expect(forAliceAgain.hasReacted == false)
            #expect(try LiveFixture.json(forBob) == ["reactions": [try LiveFixture.json(second.reaction)], "total": 1, "hasReacted": true])
        }
    }

    @Test("non-participants are forbidden, unknown rooms and elements not_found, and nothing is written or published")
    func refusals() async throws {
        try await withTestRedis { redis, server in
            let f = try await Self.fixture(redis)
            try await withSubscriber(server, to: [f.channel]) { inbox in
                let length = try await LiveFixture.streamLength(redis, f.room)
                await expectRoomcastError(.forbidden) { try await f.reactions.toggle(on: f.element.id, by: f.eve, in: f.room) }
                await expectRoomcastError(.notFound) { try await f.reactions.toggle(on: .random(), by: f.bob, in: f.room) }
                await expectRoomcastError(.notFound) { try await f.reactions.toggle(on: f.element.id, by: f.bob, in: .random()) }
                await expectRoomcastError(.forbidden) { try await f.reactions.reactions(on: f.element.id, in: f.room, for: f.eve.id) }
                await expectRoomcastError(.notFound) { try await f.reactions.reactions(on: .random(), in: f.room, for: f.bob.id) }
                await expectRoomcastError(.notFound) { try await f.reactions.reactions(on: f.element.id, in: .random(), for: f.bob.id) }
                #expect(try await LiveFixture.streamLength(redis, f.room) == length)
                #expect(try await redis.send(RedisCommand("EXISTS", f.reactionsKey), as: Int.self) == 0)
                #expect(try await server.keys(matching: "room:{\(f.room)}:element:*:reactions") == [])
                try await inbox.fence(redis, on: [f.channel])
                #expect(inbox.received.isEmpty)
            }
        }
    }

    @Test("deleting an element or clearing the room drops its hearts; toggling a deleted element is not_found")
    func deleteAndClearDropHearts() async throws {
        try await withTestRedis { redis, server in
            let f = try await Self.fixture(redis)
            let other = try await f.elements.create(try ElementStoreTests.note(), by: f.bob, in: f.room)
            _ = try await f.reactions.toggle(on: f.element.id, by: f.bob, in: f.room)
            _ = try await f.reactions.toggle(on: other.id, by: f.alice, in: f.room)
            _ = try await f.reactions.toggle(on: other.id, by: f.bob, in: f.room)
            #expect(try await server.keys(matching: "room:{\(f.room)}:element:*:reactions").count == 2)

            try await f.elements.delete(f.element.id, by: f.alice.id, in: f.room)
            #expect(try await redis.send(RedisCommand("EXISTS", f.reactionsKey), as: Int.self) == 0)
            await expectRoomcastError(.notFound) { try await f.reactions.toggle(on: f.element.id, by: f.bob, in: f.room) }
            #expect(try await redis.send(RedisCommand("EXISTS", f.reactionsKey), as: Int.self) == 0)
            #expect(try await Self.element(f.elements, other.id, in: f.room, for: f.alice.id).reactions?.count == 2)

            try await f.elements.clear(f.room, by: f.bob.id)
            #expect(try await server.keys(matching: "room:{\(f.room)}:element:*") == [])
            // A new element starts with no hearts.
            let fresh = try await f.elements.create(try ElementStoreTests.note(), by: f.alice, in: f.room)
            #expect(fresh.reactions == nil)
            #expect(try await f.reactions.reactions(on: fresh.id, in: f.room, for: f.bob.id).total == 0)
        }
    }
}
