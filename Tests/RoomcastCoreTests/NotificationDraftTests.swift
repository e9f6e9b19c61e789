import Foundation
import NIOCore
import RedisClient
import RoomcastCore
import RoomcastTestSupport
import Testing

/// NotificationDraft: validation, and the drafts Roomcast itself raises (hearts, new rooms).
@Suite("NotificationDraft validation and sources")
struct NotificationDraftTests {
    /// A draft that must be refused, named for the report.
    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var draft: NotificationDraft
        /// Refused only once the push payload is built (by `create`), not by `validate()`.
        var payloadTooLarge = false

        var testDescription: String { name }
    }

    static func draft(type: String = "t", title: String = "title", body: String = "", data: [String: String]? = nil) -> NotificationDraft {
        NotificationDraft(type: type, title: title, body: body, data: data)
    }

    static func fields(_ count: Int, valueLength: Int = 1) -> [String: String] {
        Dictionary(uniqueKeysWithValues: (0..<count).map { ("key\($0)", String(repeating: "v", count: valueLength)) })
    }

    static let invalidDrafts: [Case] = [
        Case(name: "empty type", draft: draft(type: "")),
        Case(name: "uppercase type", draft: draft(type: "Element_reaction")),
        Case(name: "type with a space", draft: draft(type: "element reaction")),
        Case(name: "type with a colon", draft: draft(type: "a:b")),
        Case(name: "type with a slash", draft: draft(type: "a/b")),
        Case(name: "non-ASCII type", draft: draft(type: "réaction")),
        Case(name: "65-character type", draft: draft(type: String(repeating: "a", count: 65))),
        Case(name: "empty title", draft: draft(title: "")),
        Case(name: "201-character title", draft: draft(title: String(repeating: "t", count: 201))),
        Case(name: "1001-character body", draft: draft(body: String(repeating: "b", count: 1001))),
        Case(name: "17 data fields", draft: draft(data: fields(17))),
        Case(name: "data key aps", draft: draft(data: ["aps": "x"])),
        Case(name: "data key type", draft: draft(data: ["type": "x"])),
        Case(name: "data key notificationId", draft: draft(data: ["notificationId": "x"])),
        Case(name: "data key roomId", draft: draft(data: ["roomId": "x"])),
        Case(name: "data key elementId", draft: draft(data: ["elementId": "x"])),
        Case(name: "data key actorId", draft: draft(data: ["actorId": "x", "ok": "y"])),
        Case(name: "empty data key", draft: draft(data: ["": "x"])),
        Case(name: "65-character data key", draft: draft(data: [String(repeating: "k", count: 65): "x"])),
        Case(name: "payload over 4 KB from data", draft: draft(data: fields(5, valueLength: 1000)), payloadTooLarge: true),
        Case(
            name: "payload over 4 KB from 1000 emoji in the body", draft: draft(body: String(repeating: "🎉", count: 1000)),
            payloadTooLarge: true
        ),
        Case(
            name: "payload over 4 KB once JSON-escaped (1000 control characters)", draft: draft(body: String(repeating: "\u{01}", count: 1000)),
            payloadTooLarge: true
        ),
    ]

    static let validDrafts: [Case] = [
        Case(name: "64-character type of every allowed character", draft: draft(type: String(repeating: "az09_.-", count: 10).prefix(64).description)),
        Case(name: "1-character type", draft: draft(type: "x")),
        Case(name: "200-character title", draft: draft(title: String(repeating: "t", count: 200))),
        Case(name: "200 emoji in the title", draft: draft(title: String(repeating: "🎉", count: 200))),
        Case(name: "1000-character body", draft: draft(body: String(repeating: "b", count: 1000))),
        Case(name: "empty body", draft: draft(body: "")),
        Case(name: "16 data fields", draft: draft(data: fields(16))),
        Case(name: "64-character data key", draft: draft(data: [String(repeating: "k", count: 64): "x"])),
        Case(name: "empty data", draft: draft(data: [:])),
        Case(name: "data near the 4 KB limit", draft: draft(title: String(repeating: "t", count: 200), body: String(repeating: "b", count: 500), data: fields(3, valueLength: 1000))),
    ]

    @Test("validate() refuses bad types, titles, bodies and data with invalid_payload", arguments: invalidDrafts.filter { !$0.payloadTooLarge })
    func validateRefuses(_ invalid: Case) {
        do {
            try invalid.draft.validate()
            Issue.record("\(invalid.name) passed validate()")
        } catch {
            #expect((error as any Error as? RoomcastError)?.code == .invalidPayload, "\(error)")
        }
    }

    @Test("validate() accepts drafts at the limits", arguments: validDrafts)
    func validateAccepts(_ valid: Case) throws {
        try valid.draft.validate()
    }

    @Test("drafts at the limits are created, and their push payload stays within 4 KB")
    func createAtLimits() async throws {
        try await withTestRedis { redis, _ in
            let user = try await UserStore(redis: redis).create(username: "alice", passwordHash: "h", displayName: nil)
            try await PushTokenStore(redis: redis).register(try PushToken(token: NotificationFixture.token(1), platform: "ios"), for: user.id)
            let store = NotificationStore(redis: redis)
            for (index, valid) in Self.validDrafts.enumerated() {
                let created = try await store.create(valid.draft, for: user.id)
                #expect(created.unreadCount == index + 1, "\(valid.name)")
                #expect(created.notification.title == valid.draft.title)
                #expect(created.notification.body == valid.draft.body)
            }
            let jobs = try await NotificationFixture.stream(redis, RedisKeys.pushOutbox)
            #expect(jobs.count == Self.validDrafts.count)
            for job in jobs {
                let payload = try #require(job.fields["payload"])
                #expect(payload.utf8.count <= 4096)
                #expect(try JSONValue(payload)["aps"]["sound"] == "default")
            }
            let largest = jobs.map { $0.fields["payload"]?.utf8.count ?? 0 }.max() ?? 0
            #expect(largest > 3500)
        }
    }

    // MARK: Sources

    struct ReactionFixture: Sendable {
        var alice: User
        var bob: User
        var carol: User
        var room: Room
        var note: Element
        var reactions: ReactionStore
    }

    /// Alice (displayed "Alice"), Bob and Carol (no display names) in a room named "Trip", with a note of Alice's.
    static func reactionFixture(_ redis: any RedisClientProtocol, roomName: String? = "Trip") async throws -> ReactionFixture {
        let users = UserStore(redis: redis)
        let alice = try await users.create(username: "alice", passwordHash: "h", displayName: "Alice")
        let bob = try await users.create(username: "bob", passwordHash: "h", displayName: nil)
        let carol = try await users.create(username: "carol", passwordHash: "h", displayName: nil)
        let room = try await RoomStore(redis: redis).create(by: alice.id, with: [bob.id, carol.id], name: roomName)
        let note = try await ElementStore(redis: redis).create(try ElementStoreTests.note(), by: alice, in: room.id)
        return ReactionFixture(alice: alice, bob: bob, carol: carol, room: room, note: note, reactions: ReactionStore(redis: redis))
    }

    @Test("ReactionStore.toggle returns the subject: room, room name, element, its type and creator; not encoded")
    func toggleSubject() async throws {
        try await withTestRedis { redis, _ in
            let f = try await Self.reactionFixture(redis)
            let added = try await f.reactions.toggle(on: f.note.id, by: f.bob, in: f.room.id)
            #expect(added.action == "added")
            let subject = try #require(added.subject)
            #expect(subject.roomId == f.room.id)
            #expect(subject.roomName == "Trip")
            #expect(subject.elementId == f.note.id)
            #expect(subject.elementType == "note")
            #expect(subject.elementCreator == f.alice.id)
            #expect(try NotificationFixture.json(added).keys == ["action", "reaction", "elementStats"])

            let removed = try await f.reactions.toggle(on: f.note.id, by: f.bob, in: f.room.id)
            #expect(removed.action == "removed")
            #expect(removed.subject == subject)

            // An unnamed room: no room name. Bob's own element: Bob is the creator.
            let unnamed = try await RoomStore(redis: redis).create(by: f.bob.id, with: [f.alice.id], name: nil)
            let bobsNote = try await ElementStore(redis: redis).create(try ElementStoreTests.note(), by: f.bob, in: unnamed.id)
            let other = try await f.reactions.toggle(on: bobsNote.id, by: f.alice, in: unnamed.id)
            let otherSubject = try #require(other.subject)
            #expect(otherSubject.roomName == nil)
            #expect(otherSubject.elementCreator == f.bob.id)
            #expect(otherSubject.roomId == unnamed.id)
        }
    }

    @Test("NotificationDraft.reaction: for the creator, deterministic id r<32 hex> per (room, element, actor), title and body")
    func reactionDraft() async throws {
        try await withTestRedis { redis, _ in
            let f = try await Self.reactionFixture(redis)
            let byBob = try #require(try await f.reactions.toggle(on: f.note.id, by: f.bob, in: f.room.id).subject)
            let draft = NotificationDraft.reaction(to: byBob, by: f.bob)
            let id = try #require(draft.id)
            #expect(id.rawValue.wholeMatch(of: /r[0-9a-f]{32}/) != nil, "\(id)")
            #expect(NotificationID(id.rawValue) == id)
            #expect(draft.type == NotificationDraft.elementReaction)
            #expect(draft.type == "element_reaction")
            #expect(draft.title == "bob hearted your note")
            #expect(draft.body == "In Trip")
            #expect(draft.roomId == f.room.id)
            #expect(draft.elementId == f.note.id)
            #expect(draft.actor == f.bob)
            #expect(draft.data == nil)
            try draft.validate()

            // Same heart again (after removing it): same id.
            _ = try await f.reactions.toggle(on: f.note.id, by: f.bob, in: f.room.id)
            let again = try #require(try await f.reactions.toggle(on: f.note.id, by: f.bob, in: f.room.id).subject)
            #expect(NotificationDraft.reaction(to: again, by: f.bob).id == id)
            #expect(NotificationDraft.reaction(to: byBob, by: f.bob) == draft)

            // Another actor, another element, another room: other ids.
            let byCarol = try #require(try await f.reactions.toggle(on: f.note.id, by: f.carol, in: f.room.id).subject)
            #expect(byCarol == byBob)
            let carols = NotificationDraft.reaction(to: byCarol, by: f.carol)
            #expect(carols.id != id)
            #expect(carols.title == "carol hearted your note")
            let secondNote = try await ElementStore(redis: redis).create(try ElementStoreTests.note(), by: f.alice, in: f.room.id)
            let onSecond = try #require(try await f.reactions.toggle(on: secondNote.id, by: f.bob, in: f.room.id).subject)
            #expect(NotificationDraft.reaction(to: onSecond, by: f.bob).id != id)
            var elsewhere = byBob
            elsewhere.roomId = .random()
            #expect(NotificationDraft.reaction(to: elsewhere, by: f.bob).id != id)

            // A display name is preferred; an unnamed room has a generic body.
            var unnamed = byBob
            unnamed.roomName = nil
            let byAlice = NotificationDraft.reaction(to: unnamed, by: f.alice)
            #expect(byAlice.title == "Alice hearted your note")
            #expect(byAlice.body == "Tap to see it")

            // Raised twice for the creator: one notification.
            let store = NotificationStore(redis: redis)
            #expect(try await store.create(draft, for: byBob.elementCreator).unreadCount == 1)
            #expect(try await store.create(NotificationDraft.reaction(to: again, by: f.bob), for: again.elementCreator).unreadCount == 1)
            let page = try await store.page(for: f.alice.id, after: nil, limit: 10)
            #expect(page.notifications.map(\.id) == [id])
            #expect(page.notifications.first?.actor == f.bob)
        }
    }

    @Test("NotificationDraft.roomCreated: type room_created, the creator's name, the room's name or a generic body")
    func roomCreatedDraft() async throws {
        try await withTestRedis { redis, _ in
            let f = try await Self.reactionFixture(redis)
            let named = NotificationDraft.roomCreated(f.room, by: f.alice)
            #expect(named.type == NotificationDraft.roomCreated)
            #expect(named.type == "room_created")
            #expect(named.title == "Alice started a room with you")
            #expect(named.body == "Trip")
            #expect(named.roomId == f.room.id)
            #expect(named.actor == f.alice)
            #expect(named.elementId == nil)
            #expect(named.data == nil)
            #expect(named.id == nil)
            try named.validate()

            let unnamedRoom = try await RoomStore(redis: redis).create(by: f.bob.id, with: [f.carol.id], name: nil)
            let unnamed = NotificationDraft.roomCreated(unnamedRoom, by: f.bob)
            #expect(unnamed.title == "bob started a room with you")
            #expect(unnamed.body == "Tap to open it")
            #expect(unnamed.roomId == unnamedRoom.id)

            // Each creation is its own notification (no fixed id).
            let store = NotificationStore(redis: redis)
            let first = try await store.create(unnamed, for: f.carol.id)
            let second = try await store.create(unnamed, for: f.carol.id)
            #expect(first.notification.id != second.notification.id)
            #expect(second.unreadCount == 2)
        }
    }
}
