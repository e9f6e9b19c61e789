import Foundation
import NIOCore
import RedisClient
import RoomcastCore
import RoomcastTestSupport
import Testing

/// NotificationStore on a real Redis: storing, the badge, the published user events, paging,
/// trimming and raising a notification again (docs/clients/push.md).
@Suite("NotificationStore against a real redis-server")
struct NotificationStoreTests {
    struct Fixture: Sendable {
        var alice: User
        var bob: User
        var store: NotificationStore

        var channel: String { RedisKeys.userChannel(alice.id) }
    }

    static func fixture(_ redis: any RedisClientProtocol, keptPerUser: Int = 500) async throws -> Fixture {
        let users = UserStore(redis: redis)
        let alice = try await users.create(username: "alice", passwordHash: "h", displayName: "Alice")
        let bob = try await users.create(username: "bob", passwordHash: "h", displayName: nil)
        return Fixture(alice: alice, bob: bob, store: NotificationStore(redis: redis, keptPerUser: keptPerUser))
    }

    /// Creates `count` plain notifications for `user`, oldest first.
    static func create(_ count: Int, _ store: NotificationStore, for user: UserID, from start: Int = 1) async throws -> [AppNotification] {
        var created: [AppNotification] = []
        for index in start..<(start + count) {
            created.append(try await store.create(NotificationFixture.draft(index), for: user).notification)
        }
        return created
    }

    /// Expects `publications` to be exactly `badge:updated {unreadCount}` events with these counts, in order.
    static func expectBadges(_ publications: [Publication], _ counts: [Int], sourceLocation: SourceLocation = #_sourceLocation) throws {
        #expect(publications.map(\.name) == Array(repeating: "badge:updated", count: counts.count), "\(publications)", sourceLocation: sourceLocation)
        let payloads = try publications.map { try $0.event().payload }
        #expect(payloads == counts.map { ["unreadCount": .number(Double($0))] }, sourceLocation: sourceLocation)
    }

    // MARK: Create

    @Test("create: the notification's fields and JSON shape, unread, and stored in the three keys")
    func createStores() async throws {
        try await withTestRedis { redis, _ in
            let f = try await Self.fixture(redis)
            let start = Timestamp.now().milliseconds
            let plain = try await f.store.create(NotificationDraft(type: "service.ping", title: "Hello", body: "World"), for: f.alice.id)
            let end = Timestamp.now().milliseconds
            #expect(plain.unreadCount == 1)
            let notification = plain.notification
            #expect(notification.id.rawValue.wholeMatch(of: /[0-9a-f]{32}/) != nil)
            #expect(notification.type == "service.ping")
            #expect(notification.title == "Hello")
            #expect(notification.body == "World")
            #expect(notification.roomId == nil && notification.elementId == nil && notification.actor == nil && notification.data == nil)
            #expect(notification.read == false)
            #expect(notification.createdAt.milliseconds >= start && notification.createdAt.milliseconds <= end)

            // nil optionals are left out; read is false; createdAt is ISO 8601 UTC with ms.
            let json = try NotificationFixture.json(notification)
            #expect(json.keys == ["id", "type", "title", "body", "read", "createdAt"])
            #expect(json["read"] == false)
            #expect(json["id"].stringValue == notification.id.rawValue)
            #expect(NotificationFixture.isISOTimestamp(json["createdAt"]))

            // The three keys: sequence 1 in the sorted set, the JSON in the hash, the id in the unread set.
            let id = notification.id.rawValue
            #expect(try await NotificationFixture.scored(redis, RedisKeys.userNotifications(f.alice.id)).map { "\($0.member)=\($0.score)" } == ["\(id)=1"])
            let stored = try await LiveFixture.hash(redis, RedisKeys.userNotificationData(f.alice.id))
            #expect(Set(stored.keys) == [id])
            #expect(try JSONValue(try #require(stored[id])) == json)
            #expect(try await NotificationFixture.setMembers(redis, RedisKeys.userUnreadNotifications(f.alice.id)) == [id])
            #expect(try await LiveFixture.hash(redis, RedisKeys.user(f.alice.id))["notificationSeq"] == "1")

            // Every optional set.
            let room = RoomID.random()
            let element = ElementID.random()
            let draftID = try #require(NotificationID("custom-id_1"))
            let full = try await f.store.create(
                NotificationDraft(
                    id: draftID, type: NotificationDraft.elementReaction, title: "Bob hearted your note", body: "In Trip", roomId: room,
                    elementId: element, actor: f.bob, data: ["orderId": "42", "emoji": "🎉"]
                ),
                for: f.alice.id
            )
            #expect(full.unreadCount == 2)
            #expect(full.notification.id == draftID)
            let fullJSON = try NotificationFixture.json(full.notification)
            #expect(fullJSON.keys == ["id", "type", "title", "body", "roomId", "elementId", "actor", "data", "read", "createdAt"])
            #expect(fullJSON["id"] == "custom-id_1")
            #expect(fullJSON["roomId"].stringValue == room.rawValue)
            #expect(fullJSON["elementId"].stringValue == element.rawValue)
            #expect(fullJSON["actor"] == (try NotificationFixture.json(f.bob)))
            #expect(fullJSON["data"] == ["orderId": "42", "emoji": "🎉"])
            #expect(fullJSON["read"] == false)
            #expect(try JSONValue(try #require(try await LiveFixture.hash(redis, RedisKeys.userNotificationData(f.alice.id))["custom-id_1"])) == fullJSON)
            #expect(try await NotificationFixture.scored(redis, RedisKeys.userNotifications(f.alice.id)).map(\.score) == ["1", "2"])

            #expect(try await f.store.unreadCount(for: f.alice.id) == 2)
            #expect(try await f.store.unreadCount(for: f.bob.id) == 0)
            #expect(try await NotificationFixture.exists(redis, RedisKeys.userNotifications(f.bob.id)) == false)
        }
    }

    @Test("create publishes exactly notification:new {notification, unreadCount} then badge:updated {unreadCount} on the user's channel")
    func createPublishes() async throws {
        try await withTestRedis { redis, server in
            let f = try await Self.fixture(redis)
            let bobs = RedisKeys.userChannel(f.bob.id)
            try await withSubscriber(server, to: [f.channel, bobs]) { inbox async throws in
                let first = try await f.store.create(NotificationFixture.draft(1), for: f.alice.id)
                let second = try await f.store.create(
                    NotificationDraft(type: "x", title: "With actor", body: "", roomId: .random(), actor: f.bob, data: ["k": "v"]), for: f.alice.id
                )
                let published = try await NotificationFixture.settle(inbox, redis, on: f.channel)
                #expect(published.map(\.name) == ["notification:new", "badge:updated", "notification:new", "badge:updated"])
                // The offset of the user's stream, increasing: `<offset> 42[...]`, as stored there.
                #expect(published.allSatisfy { $0.offset != nil && !$0.isPerRecipient && $0.raw.hasPrefix("\($0.offset!) 42[\"") })
                let offsets = published.compactMap { $0.offset.flatMap(StreamOffset.init) }
                #expect(offsets == offsets.sorted() && Set(offsets).count == 4)
                #expect(String(buffer: published[0].envelope.frame).hasPrefix(#"42["notification:new",{"notification":{"#))
                #expect(String(buffer: published[1].envelope.frame) == #"42["badge:updated",{"unreadCount":1}]"#)
                #expect(String(buffer: published[3].envelope.frame) == #"42["badge:updated",{"unreadCount":2}]"#)
                let stored = try #require(try await UserEventLog(redis: redis).events(of: f.alice.id, after: StreamOffset("0-0")!))
                #expect(stored.map { String(buffer: $0.frame) } == published.map { String(buffer: $0.envelope.frame) })

                #expect(try published[0].event().payload == ["notification": try NotificationFixture.json(first.notification), "unreadCount": 1])
                #expect(try published[1].event().payload == ["unreadCount": 1])
                #expect(try published[2].event().payload == ["notification": try NotificationFixture.json(second.notification), "unreadCount": 2])
                #expect(try published[2].event().payload["notification"]["read"] == false)
                #expect(try published[3].event().payload == ["unreadCount": 2])

                // Bob hears nothing of Alice's notifications.
                #expect(try await NotificationFixture.settle(inbox, redis, on: bobs).isEmpty)
            }
        }
    }

    @Test("create for an unknown user: not_found, nothing stored, published or enqueued (even with a device token)")
    func createUnknownUser() async throws {
        try await withTestRedis { redis, server in
            let f = try await Self.fixture(redis)
            let ghost = UserID.random()
            try await PushTokenStore(redis: redis).register(try PushToken(token: NotificationFixture.token(1), platform: "ios"), for: ghost)
            let channel = RedisKeys.userChannel(ghost)
            try await withSubscriber(server, to: [channel]) { inbox async throws in
                await expectRoomcastError(.notFound) { try await f.store.create(NotificationFixture.draft(), for: ghost) }
                await expectRoomcastError(.notFound) {
                    try await f.store.create(NotificationFixture.draft(id: NotificationID("fixed")), for: ghost)
                }
                let pattern = "user:{\(ghost)}*"
                let ghostKeys = try await server.keys(matching: pattern)
                // The sockets are the test subscriber's, watching the ghost's events (TestNode).
                #expect(ghostKeys == [RedisKeys.userPushTokens(ghost), RedisKeys.userSockets(ghost)])
                #expect(try await NotificationFixture.exists(redis, RedisKeys.pushOutbox) == false)
                #expect(try await f.store.unreadCount(for: ghost) == 0)
                #expect(try await NotificationFixture.settle(inbox, redis, on: channel).isEmpty)
            }
        }
    }

    @Test("invalid drafts are invalid_payload from create, and nothing is stored, published or enqueued")
    func createInvalid() async throws {
        try await withTestRedis { redis, server in
            let f = try await Self.fixture(redis)
            try await PushTokenStore(redis: redis).register(try PushToken(token: NotificationFixture.token(1), platform: "ios"), for: f.alice.id)
            try await withSubscriber(server, to: [f.channel]) { inbox async throws in
                for invalid in NotificationDraftTests.invalidDrafts {
                    do {
                        _ = try await f.store.create(invalid.draft, for: f.alice.id)
                        Issue.record("\(invalid.name): create succeeded")
                    } catch {
                        #expect((error as any Error as? RoomcastError)?.code == .invalidPayload, "\(invalid.name): \(error)")
                    }
                }
                // Validation comes first: an unknown user with a bad draft is invalid_payload too.
                await expectRoomcastError(.invalidPayload) {
                    try await f.store.create(NotificationDraft(type: "", title: "t", body: ""), for: .random())
                }
                for key in [
                    RedisKeys.userNotifications(f.alice.id), RedisKeys.userNotificationData(f.alice.id),
                    RedisKeys.userUnreadNotifications(f.alice.id), RedisKeys.pushOutbox,
                ] {
                    #expect(try await NotificationFixture.exists(redis, key) == false, "\(key)")
                }
                #expect(try await LiveFixture.hash(redis, RedisKeys.user(f.alice.id))["notificationSeq"] == nil)
                #expect(try await NotificationFixture.settle(inbox, redis, on: f.channel).isEmpty)
            }
        }
    }

    @Test("concurrent creates: each sees its own unread count, and the sequences are distinct")
    func concurrentCreates() async throws {
        try await withTestRedis(poolSize: 8) { redis, _ in
            let f = try await Self.fixture(redis)
            let store = f.store
            let alice = f.alice.id
            let counts = try await withThrowingTaskGroup(of: Int.self) { group in
                for index in 0..<30 {
                    group.addTask { try await store.create(NotificationFixture.draft(index), for: alice).unreadCount }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(counts.sorted() == Array(1...30))
            #expect(try await NotificationFixture.scored(redis, RedisKeys.userNotifications(alice)).map(\.score) == (1...30).map(String.init))
            #expect(try await store.unreadCount(for: alice) == 30)
        }
    }

    // MARK: Reading

    @Test("the same notification marked read 50 times at once lowers the badge by exactly one, with one badge:updated")
    func concurrentReadsOfOne() async throws {
        try await withTestRedis(poolSize: 8) { redis, server in
            let f = try await Self.fixture(redis)
            let created = try await Self.create(3, f.store, for: f.alice.id)
            let store = f.store
            let alice = f.alice.id
            let target = created[1].id
            try await withSubscriber(server, to: [f.channel]) { inbox async throws in
                let results = try await withThrowingTaskGroup(of: Int.self) { group in
                    for _ in 0..<50 {
                        group.addTask { try await store.markRead(target, for: alice) }
                    }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
                #expect(results == Array(repeating: 2, count: 50))
                #expect(try await store.unreadCount(for: alice) == 2)
                #expect(try await NotificationFixture.setMembers(redis, RedisKeys.userUnreadNotifications(alice)) == [created[0].id.rawValue, created[2].id.rawValue])
                try Self.expectBadges(try await NotificationFixture.settle(inbox, redis, on: f.channel), [2])

                // Once more, alone: same count, still nothing new published.
                #expect(try await store.markRead(target, for: alice) == 2)
                try Self.expectBadges(try await NotificationFixture.settle(inbox, redis, on: f.channel), [2])
                // The notification is still listed, as read.
                let page = try await store.page(for: alice, after: nil, limit: 10)
                #expect(page.notifications.map(\.read) == [false, true, false])
            }
        }
    }

    @Test("concurrent reads of different notifications (each twice): every one counted once, the badge ends exact")
    func concurrentReadsOfMany() async throws {
        try await withTestRedis(poolSize: 8) { redis, server in
            let f = try await Self.fixture(redis)
            let created = try await Self.create(20, f.store, for: f.alice.id)
            let store = f.store
            let alice = f.alice.id
            try await withSubscriber(server, to: [f.channel]) { inbox async throws in
                let results = try await withThrowingTaskGroup(of: Int.self) { group in
                    for notification in created + created {
                        group.addTask { try await store.markRead(notification.id, for: alice) }
                    }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
                #expect(results.count == 40)
                #expect(results.allSatisfy { (0..<20).contains($0) })
                #expect(try await store.unreadCount(for: alice) == 0)
                // One badge:updated per notification, counting down 19 … 0 in the order applied.
                let published = try await NotificationFixture.settle(inbox, redis, on: f.channel)
                try Self.expectBadges(published, Array((0..<20).reversed()))
            }
        }
    }

    @Test("markRead of an unknown id, or of another user's notification, is not_found and changes nothing")
    func markReadUnknown() async throws {
        try await withTestRedis { redis, server in
            let f = try await Self.fixture(redis)
            let mine = try await f.store.create(NotificationFixture.draft(), for: f.alice.id).notification
            try await withSubscriber(server, to: [f.channel, RedisKeys.userChannel(f.bob.id)]) { inbox async throws in
                await expectRoomcastError(.notFound) { try await f.store.markRead(.random(), for: f.alice.id) }
                await expectRoomcastError(.notFound) { try await f.store.markRead(mine.id, for: f.bob.id) }
                await expectRoomcastError(.notFound) { try await f.store.markRead(mine.id, for: .random()) }
                #expect(try await f.store.unreadCount(for: f.alice.id) == 1)
                #expect(try await f.store.unreadCount(for: f.bob.id) == 0)
                #expect(try await NotificationFixture.exists(redis, RedisKeys.userUnreadNotifications(f.bob.id)) == false)
                #expect(try await NotificationFixture.settle(inbox, redis, on: f.channel).isEmpty)
                #expect(try await NotificationFixture.settle(inbox, redis, on: RedisKeys.userChannel(f.bob.id)).isEmpty)
            }
            #expect(try await f.store.markRead(mine.id, for: f.alice.id) == 0)
        }
    }

    @Test("markAllRead: returns how many were unread, badge 0, badge:updated {0} every time; a create after counts 1")
    func markAllRead() async throws {
        try await withTestRedis { redis, server in
            let f = try await Self.fixture(redis)
            let created = try await Self.create(3, f.store, for: f.alice.id)
            #expect(try await f.store.markRead(created[0].id, for: f.alice.id) == 2)
            try await withSubscriber(server, to: [f.channel]) { inbox async throws in
                #expect(try await f.store.markAllRead(for: f.alice.id) == 2)
                #expect(try await f.store.unreadCount(for: f.alice.id) == 0)
                #expect(try await NotificationFixture.exists(redis, RedisKeys.userUnreadNotifications(f.alice.id)) == false)
                // Still listed, all read.
                let page = try await f.store.page(for: f.alice.id, after: nil, limit: 10)
                #expect(page.notifications.map(\.id) == created.reversed().map(\.id))
                #expect(page.notifications.allSatisfy { $0.read })
                try Self.expectBadges(try await NotificationFixture.settle(inbox, redis, on: f.channel), [0])

                // Nothing unread: 0, and published again.
                #expect(try await f.store.markAllRead(for: f.alice.id) == 0)
                try Self.expectBadges(try await NotificationFixture.settle(inbox, redis, on: f.channel), [0, 0])
                // A read of an already-read notification changes nothing and publishes nothing.
                #expect(try await f.store.markRead(created[2].id, for: f.alice.id) == 0)
                try Self.expectBadges(try await NotificationFixture.settle(inbox, redis, on: f.channel), [0, 0])

                let fresh = try await f.store.create(NotificationFixture.draft(4), for: f.alice.id)
                #expect(fresh.unreadCount == 1)
                #expect(try await f.store.unreadCount(for: f.alice.id) == 1)
                let after = try await f.store.page(for: f.alice.id, after: nil, limit: 10)
                #expect(after.notifications.map(\.read) == [false, true, true, true])
                #expect(after.notifications.first?.id == fresh.notification.id)
            }
            // A user with nothing at all.
            #expect(try await f.store.markAllRead(for: f.bob.id) == 0)
        }
    }

    // MARK: Paging

    @Test("pages: newest first, cursors across pages, read flags per item, end of the list")
    func paging() async throws {
        try await withTestRedis { redis, _ in
            let f = try await Self.fixture(redis)
            let created = try await Self.create(7, f.store, for: f.alice.id)
            _ = try await f.store.markRead(created[1].id, for: f.alice.id)  // #2
            _ = try await f.store.markRead(created[4].id, for: f.alice.id)  // #5

            let first = try await f.store.page(for: f.alice.id, after: nil, limit: 3)
            #expect(first.notifications.map(\.title) == ["Title 7", "Title 6", "Title 5"])
            #expect(first.notifications.map(\.read) == [false, false, true])
            #expect(first.nextCursor == "5")
            // Items are the notifications as created, but for `read`.
            var expected = created[6]
            #expect(first.notifications[0] == expected)
            expected = created[4]
            expected.read = true
            #expect(first.notifications[2] == expected)

            let second = try await f.store.page(for: f.alice.id, after: first.nextCursor, limit: 3)
            #expect(second.notifications.map(\.title) == ["Title 4", "Title 3", "Title 2"])
            #expect(second.notifications.map(\.read) == [false, false, true])
            #expect(second.nextCursor == "2")

            let third = try await f.store.page(for: f.alice.id, after: second.nextCursor, limit: 3)
            #expect(third.notifications.map(\.title) == ["Title 1"])
            #expect(third.notifications.map(\.read) == [false])
            #expect(third.nextCursor == nil)

            // Exactly a page's worth: no next page.
            let whole = try await f.store.page(for: f.alice.id, after: nil, limit: 7)
            #expect(whole.notifications.map(\.id) == created.reversed().map(\.id))
            #expect(whole.nextCursor == nil)
            #expect(try await f.store.page(for: f.alice.id, after: nil, limit: 50).notifications.count == 7)
            let small = try await f.store.page(for: f.alice.id, after: "7", limit: 1)
            #expect(small.notifications.map(\.title) == ["Title 6"])
            #expect(small.nextCursor == "6")

            // Past the oldest: an empty last page.
            let beyond = try await f.store.page(for: f.alice.id, after: "1", limit: 3)
            #expect(beyond.notifications.isEmpty)
            #expect(beyond.nextCursor == nil)
        }
    }

    @Test("bad cursors are invalid_payload; a user with no notifications gets an empty last page")
    func pagingRefusals() async throws {
        try await withTestRedis { redis, _ in
            let f = try await Self.fixture(redis)
            _ = try await Self.create(2, f.store, for: f.alice.id)
            for cursor in ["abc", "", "0", "-3", "1.5", " 1", "(1", "+inf", "99999999999999999999999"] {
                await expectRoomcastError(.invalidPayload) { try await f.store.page(for: f.alice.id, after: cursor, limit: 10) }
            }
            let empty = try await f.store.page(for: f.bob.id, after: nil, limit: 10)
            #expect(empty.notifications.isEmpty)
            #expect(empty.nextCursor == nil)
            let unknown = try await f.store.page(for: .random(), after: nil, limit: 10)
            #expect(unknown.notifications.isEmpty && unknown.nextCursor == nil)
        }
    }

    // MARK: Trimming and raising again

    @Test("keptPerUser: the oldest go from all three keys, read or not, and the badge drops with them")
    func trimming() async throws {
        try await withTestRedis { redis, _ in
            let f = try await Self.fixture(redis, keptPerUser: 3)
            var counts: [Int] = []
            var created: [AppNotification] = []
            for index in 1...5 {
                let result = try await f.store.create(NotificationFixture.draft(index), for: f.alice.id)
                counts.append(result.unreadCount)
                created.append(result.notification)
            }
            #expect(counts == [1, 2, 3, 3, 3])
            let kept = Set(created[2...].map(\.id.rawValue))
            #expect(Set(try await NotificationFixture.scored(redis, RedisKeys.userNotifications(f.alice.id)).map(\.member)) == kept)
            #expect(try await NotificationFixture.hashKeys(redis, RedisKeys.userNotificationData(f.alice.id)) == kept)
            #expect(try await NotificationFixture.setMembers(redis, RedisKeys.userUnreadNotifications(f.alice.id)) == kept)

            // #5 read; #6 pushes out #3 (unread): unread are #4 and #6.
            #expect(try await f.store.markRead(created[4].id, for: f.alice.id) == 2)
            let sixth = try await f.store.create(NotificationFixture.draft(6), for: f.alice.id)
            #expect(sixth.unreadCount == 2)
            #expect(try await NotificationFixture.setMembers(redis, RedisKeys.userUnreadNotifications(f.alice.id)) == [created[3].id.rawValue, sixth.notification.id.rawValue])
            #expect(try await NotificationFixture.hashKeys(redis, RedisKeys.userNotificationData(f.alice.id)) == [created[3].id.rawValue, created[4].id.rawValue, sixth.notification.id.rawValue])
            let page = try await f.store.page(for: f.alice.id, after: nil, limit: 10)
            #expect(page.notifications.map(\.title) == ["Title 6", "Title 5", "Title 4"])
            #expect(page.notifications.map(\.read) == [false, true, false])
            #expect(page.nextCursor == nil)

            // #7 pushes out #4 (unread) while #5 (read) stays: unread #6, #7.
            #expect(try await f.store.create(NotificationFixture.draft(7), for: f.alice.id).unreadCount == 2)
            // A trimmed notification is gone.
            await expectRoomcastError(.notFound) { try await f.store.markRead(created[0].id, for: f.alice.id) }
            await expectRoomcastError(.notFound) { try await f.store.markRead(created[3].id, for: f.alice.id) }
            #expect(try await f.store.unreadCount(for: f.alice.id) == 2)
        }
    }

    @Test("the same draft id again: one entry, moved to the top, unread again; the badge grows only if it had been read")
    func raiseAgain() async throws {
        try await withTestRedis { redis, server in
            let f = try await Self.fixture(redis)
            let x = try #require(NotificationID("same-event"))
            let first = try await f.store.create(NotificationDraft(id: x, type: "t", title: "first", body: ""), for: f.alice.id)
            #expect(first.unreadCount == 1)
            let other = try await f.store.create(NotificationFixture.draft(2), for: f.alice.id)
            #expect(other.unreadCount == 2)

            try await withSubscriber(server, to: [f.channel]) { inbox async throws in
                // Still unread: raised to the top, the count unchanged, the content replaced.
                let again = try await f.store.create(NotificationDraft(id: x, type: "t", title: "second", body: "b"), for: f.alice.id)
                #expect(again.unreadCount == 2)
                #expect(again.notification.id == x)
                #expect(again.notification.createdAt >= first.notification.createdAt)
                var page = try await f.store.page(for: f.alice.id, after: nil, limit: 10)
                #expect(page.notifications.map(\.id) == [x, other.notification.id])
                #expect(page.notifications.first?.title == "second")
                #expect(page.notifications.map(\.read) == [false, false])
                #expect(try await NotificationFixture.scored(redis, RedisKeys.userNotifications(f.alice.id)).map { "\($0.member)=\($0.score)" }
                    == ["\(other.notification.id)=2", "\(x)=3"])
                #expect(try await NotificationFixture.hashKeys(redis, RedisKeys.userNotificationData(f.alice.id)).count == 2)

                // Read, then raised again: unread again, the count one more.
                #expect(try await f.store.markRead(x, for: f.alice.id) == 1)
                let third = try await f.store.create(NotificationDraft(id: x, type: "t", title: "third", body: "b"), for: f.alice.id)
                #expect(third.unreadCount == 2)
                page = try await f.store.page(for: f.alice.id, after: nil, limit: 10)
                #expect(page.notifications.map(\.id) == [x, other.notification.id])
                #expect(page.notifications.map(\.read) == [false, false])
                #expect(page.notifications.first?.title == "third")

                // Raise the older one instead: it moves above x.
                let raisedOther = try await f.store.create(NotificationFixture.draft(2, id: other.notification.id), for: f.alice.id)
                #expect(raisedOther.unreadCount == 2)
                page = try await f.store.page(for: f.alice.id, after: nil, limit: 10)
                #expect(page.notifications.map(\.id) == [other.notification.id, x])

                let published = try await NotificationFixture.settle(inbox, redis, on: f.channel)
                #expect(published.map(\.name) == [
                    "notification:new", "badge:updated", "badge:updated", "notification:new", "badge:updated", "notification:new", "badge:updated",
                ])
                #expect(try published.map { try $0.event().payload["unreadCount"].intValue } == [2, 2, 1, 2, 2, 2, 2])
                #expect(try published[3].event().payload["notification"] == (try NotificationFixture.json(third.notification)))
            }
        }
    }
}
