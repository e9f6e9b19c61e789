import NIOCore
import RedisClient
import RoomcastCore
import RoomcastTestSupport
import Testing

/// PresenceStore on a real Redis: members per socket with an expiry, `room:presence` whenever the
/// set of present users changes (expiries noticed by a refresh included), unseen counts reset on join.
@Suite("PresenceStore against a real redis-server")
struct PresenceStoreTests {
    struct Fixture: Sendable {
        var alice: User
        var bob: User
        var carol: User
        var eve: User
        var room: RoomID
        var store: PresenceStore

        var channel: String { RedisKeys.roomChannel(room) }
        var presenceKey: String { RedisKeys.roomPresence(room) }
    }

    /// Alice, Bob and Carol share a room; Eve is not in it.
    static func fixture(_ redis: any RedisClientProtocol, lifetime: Duration = .seconds(30)) async throws -> Fixture {
        let users = try await LiveFixture.users(redis, 4, prefix: "p")
        let room = try await RoomStore(redis: redis).create(by: users[0].id, with: [users[1].id, users[2].id], name: nil)
        return Fixture(alice: users[0], bob: users[1], carol: users[2], eve: users[3], room: room.id, store: PresenceStore(redis: redis, lifetime: lifetime))
    }

    /// The `room:presence` payload expected for `users`.
    static func presence(_ room: RoomID, _ users: [User], offset: String?) -> JSONValue {
        [
            "roomId": .string(room.rawValue), "isActive": .bool(!users.isEmpty),
            "activeUserIds": .array(users.map(\.id.rawValue).sorted().map(JSONValue.string)), "offset": .string(offset ?? ""),
        ]
    }

    /// Checks one published `room:presence` against `users` and returns its offset.
    @discardableResult
    static func expectPresence(_ publication: Publication, _ room: RoomID, _ users: [User], sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        #expect(!publication.isPerRecipient, sourceLocation: sourceLocation)
        let event = try publication.event()
        #expect(event.name == "room:presence", sourceLocation: sourceLocation)
        #expect(event.payload == Self.presence(room, users, offset: publication.offset), sourceLocation: sourceLocation)
        return try #require(publication.offset, sourceLocation: sourceLocation)
    }

    static func score(_ redis: any RedisClientProtocol, _ key: String, _ member: String) async throws -> Int64? {
        let reply = try await redis.send("ZSCORE", key, member)
        return reply.string.flatMap { Double($0) }.map { Int64($0) }
    }

    @Test("join adds the socket's member with an expiry one lifetime ahead, resets unseen counts and announces presence")
    func join() async throws {
        try await withTestRedis { redis, server in
            let f = try await Self.fixture(redis, lifetime: .milliseconds(12_345))
            _ = try await redis.send("HSET", RedisKeys.roomUnseenElements(f.room), f.alice.id.rawValue, 4, f.bob.id.rawValue, 2)
            // Seven messages since Alice last read the room (her read position is 0).
            _ = try await redis.send("HSET", RedisKeys.room(f.room), "messageSeq", 7)
            try await withSubscriber(server, to: [f.channel]) { inbox in
                let before = Timestamp.now().milliseconds
                try await f.store.join(f.room, user: f.alice.id, socket: "sockA")
                let after = Timestamp.now().milliseconds
                let member = PresenceStore.member(user: f.alice.id, socket: "sockA")
                #expect(member == "\(f.alice.id)|sockA")
                let expiry = try #require(try await Self.score(redis, f.presenceKey, member))
                #expect(expiry >= before + 12_345 && expiry <= after + 12_345)
                #expect(try await LiveFixture.hash(redis, RedisKeys.roomUnseenElements(f.room)) == [f.alice.id.rawValue: "0", f.bob.id.rawValue: "2"])
                #expect(try await LiveFixture.hash(redis, RedisKeys.roomMessageReads(f.room)) == [f.alice.id.rawValue: "7"])
                #expect(try await f.store.presentUsers(in: f.room) == [f.alice.id])

                let published = try #require(try await inbox.publications(1).first)
                let offset = try Self.expectPresence(published, f.room, [f.alice])
                #expect(offset == (try await ElementStoreTests.lastStreamID(redis, f.room)))
            }
        }
    }

    @Test("room:presence comes only when the set of present users changes, activeUserIds sorted")
    func onlyChangesAreAnnounced() async throws {
        try await withTestRedis { redis, server in
            let f = try await Self.fixture(redis)
            try await withSubscriber(server, to: [f.channel]) { inbox in
                try await f.store.join(f.room, user: f.carol.id, socket: "c1")
                try Self.expectPresence(try await inbox.publications(1)[0], f.room, [f.carol])
                try await f.store.join(f.room, user: f.alice.id, socket: "a1")
                try Self.expectPresence(try await inbox.publications(2)[1], f.room, [f.alice, f.carol])
                let length = try await LiveFixture.streamLength(redis, f.room)

                // Alice's second device, the same socket again, a refresh: no change, no event.
                try await f.store.join(f.room, user: f.alice.id, socket: "a2")
                try await f.store.join(f.room, user: f.alice.id, socket: "a2")
                try await f.store.refresh(f.room, members: [PresenceStore.member(user: f.alice.id, socket: "a1")])
                // Leaving one of two sockets, or one that was never there: still present.
                try await f.store.leave(f.room, user: f.alice.id, socket: "a1")
                try await f.store.leave(f.room, user: f.bob.id, socket: "never")
                #expect(try await LiveFixture.streamLength(redis, f.room) == length)
                #expect(try await f.store.presentUsers(in: f.room) == [f.alice.id, f.carol.id].sorted())

                try await f.store.join(f.room, user: f.bob.id, socket: "b1")
                try Self.expectPresence(try await inbox.publications(3)[2], f.room, [f.alice, f.bob, f.carol])
                try await f.store.leave(f.room, user: f.alice.id, socket: "a2")
                try Self.expectPresence(try await inbox.publications(4)[3], f.room, [f.bob, f.carol])
                try await f.store.leave(f.room, user: f.bob.id, socket: "b1")
                try await f.store.leave(f.room, user: f.carol.id, socket: "c1")
                let published = try await inbox.publications(6)
                try Self.expectPresence(published[4], f.room, [f.carol])
                try Self.expectPresence(published[5], f.room, [])
                #expect(try published[5].event().payload["isActive"] == false)
                #expect(try await f.store.presentUsers(in: f.room) == [])
                #expect(try await redis.send(RedisCommand("ZCARD", f.presenceKey), as: Int.self) == 0)

                // Offsets increase; nothing else was published.
                let offsets = published.compactMap { $0.offset.flatMap(StreamOffset.init) }
                #expect(offsets.count == 6)
                #expect(zip(offsets, offsets.dropFirst()).allSatisfy { $0 < $1 })
                try await inbox.fence(redis, on: [f.channel])
                #expect(inbox.received.count == 6)
            }
        }
    }

    @Test("a member whose expiry passed disappears on the next refresh, and room:presence lists the remaining users")
    func expiryNoticedByRefresh() async throws {
        try await withTestRedis { redis, server in
            let f = try await Self.fixture(redis)
            let aliceMember = PresenceStore.member(user: f.alice.id, socket: "a1")
            try await f.store.join(f.room, user: f.alice.id, socket: "a1")
            try await f.store.join(f.room, user: f.bob.id, socket: "b1")
            try await f.store.join(f.room, user: f.carol.id, socket: "c1")
            try await withSubscriber(server, to: [f.channel]) { inbox in
                // Bob's node crashed: nobody refreshes his member and its expiry is now in the past.
                let now = Timestamp.now().milliseconds
                try await LiveFixture.seedPresence(redis, f.room, f.bob.id, socket: "b1", expiry: now - 1)
                // Already not present for readers (and for unseen counts)...
                #expect(try await f.store.presentUsers(in: f.room) == [f.alice.id, f.carol.id].sorted())
                // ...and announced gone by the next refresh of any node holding the room.
                let aliceBefore = try #require(try await Self.score(redis, f.presenceKey, aliceMember))
                try await Task.sleep(for: .milliseconds(5))
                try await f.store.refresh(f.room, members: [aliceMember])
                let published = try #require(try await inbox.publications(1).first)
                try Self.expectPresence(published, f.room, [f.alice, f.carol])
                #expect(try await Self.score(redis, f.presenceKey, PresenceStore.member(user: f.bob.id, socket: "b1")) == nil)
                let aliceAfter = try #require(try await Self.score(redis, f.presenceKey, aliceMember))
                #expect(aliceAfter > aliceBefore)

                // A second refresh has nothing new to say.
                try await f.store.refresh(f.room, members: [aliceMember])
                try await inbox.fence(redis, on: [f.channel])
                #expect(inbox.received.count == 1)
            }
        }
    }

    @Test("a refresh reports members that are gone without adding them back; restoring adds them back and announces it")
    func restore() async throws {
        try await withTestRedis { redis, server in
            let f = try await Self.fixture(redis)
            let aliceMember = PresenceStore.member(user: f.alice.id, socket: "a1")
            let bobMember = PresenceStore.member(user: f.bob.id, socket: "b1")
            try await f.store.join(f.room, user: f.alice.id, socket: "a1")
            try await f.store.join(f.room, user: f.bob.id, socket: "b1")
            try await withSubscriber(server, to: [f.channel]) { inbox in
                // Redis lost Bob's member (a restart from an AOF a second behind, say).
                _ = try await redis.send("ZREM", f.presenceKey, bobMember)
                let gone = try await f.store.refresh(f.room, members: [aliceMember, bobMember])
                #expect(gone == [bobMember])
                #expect(try await Self.score(redis, f.presenceKey, bobMember) == nil, "a plain refresh never revives a member")
                try Self.expectPresence(try await inbox.publications(1)[0], f.room, [f.alice])
                // Bob's node still holds the socket: it restores the member.
                let restored = try await f.store.refresh(f.room, members: [bobMember], restoring: true)
                #expect(restored == [bobMember])
                #expect(try await Self.score(redis, f.presenceKey, bobMember) != nil)
                try Self.expectPresence(try await inbox.publications(2)[1], f.room, [f.alice, f.bob])
                #expect(try await f.store.refresh(f.room, members: [aliceMember, bobMember]).isEmpty)
            }
        }
    }

    @Test("with a short lifetime, a member nobody refreshes expires by itself")
    func realExpiry() async throws {
        try await withTestRedis { redis, server in
            let f = try await Self.fixture(redis)
            // Wide margins: a loaded machine may stall one step for seconds. Each "still there"
            // check runs at least 3 s before the expiry it checks against.
            let lifetime = Duration.seconds(5)
            let shortLived = PresenceStore(redis: redis, lifetime: lifetime)
            try await f.store.join(f.room, user: f.alice.id, socket: "a1")
            try await shortLived.join(f.room, user: f.bob.id, socket: "b1")
            #expect(try await f.store.presentUsers(in: f.room) == [f.alice.id, f.bob.id].sorted())
            try await withSubscriber(server, to: [f.channel]) { inbox in
                // Refreshed in time: still there past the joining's expiry.
                try await Task.sleep(for: .milliseconds(200))
                let clock = ContinuousClock()
                let refreshed = clock.now
                #expect(try await shortLived.refresh(f.room, members: [PresenceStore.member(user: f.bob.id, socket: "b1")]).isEmpty)
                try await Task.sleep(for: .milliseconds(1_000))
                #expect(try await f.store.presentUsers(in: f.room) == [f.alice.id, f.bob.id].sorted())
                // Not refreshed: gone once the lifetime passed since the refresh, not before
                // (polled, so a slow machine only waits longer).
                #expect(try await eventually(within: .seconds(30)) { try await f.store.presentUsers(in: f.room) == [f.alice.id] })
                #expect(clock.now - refreshed >= lifetime - .milliseconds(100), "gone after \(clock.now - refreshed)")
                try await f.store.refresh(f.room, members: [PresenceStore.member(user: f.alice.id, socket: "a1")])
                try Self.expectPresence(try await inbox.publications(1)[0], f.room, [f.alice])
            }
        }
    }

    @Test("a refresh by a node whose own sockets all expired announces the room empty")
    func everyoneExpired() async throws {
        try await withTestRedis { redis, server in
            let f = try await Self.fixture(redis)
            try await f.store.join(f.room, user: f.alice.id, socket: "a1")
            try await LiveFixture.seedPresence(redis, f.room, f.alice.id, socket: "a1", expiry: Timestamp.now().milliseconds - 10)
            try await withSubscriber(server, to: [f.channel]) { inbox in
                try await f.store.refresh(f.room, members: [])
                try Self.expectPresence(try await inbox.publications(1)[0], f.room, [])
            }
        }
    }

    @Test("a non-participant cannot join: forbidden, and nothing is written")
    func outsider() async throws {
        try await withTestRedis { redis, server in
            let f = try await Self.fixture(redis)
            try await withSubscriber(server, to: [f.channel]) { inbox in
                await expectRoomcastError(.forbidden) { try await f.store.join(f.room, user: f.eve.id, socket: "e1") }
                #expect(try await redis.send(RedisCommand("EXISTS", f.presenceKey, RedisKeys.roomUnseenElements(f.room), RedisKeys.roomMessageReads(f.room)), as: Int.self) == 0)
                #expect(try await LiveFixture.streamLength(redis, f.room) == 0)
                try await inbox.fence(redis, on: [f.channel])
                #expect(inbox.received.isEmpty)
            }
        }
    }

    @Test("a join catches up in the same call: the events after `since`, else the room's elements, read before its own room:presence")
    func catchUp() async throws {
        try await withTestRedis { redis, _ in
            let f = try await Self.fixture(redis)
            let messages = MessageStore(redis: redis)
            let origin = try await messages.send("one", from: f.bob, to: f.room).offset
            _ = try await messages.send("two", from: f.bob, to: f.room)
            _ = try await messages.send("three", from: f.bob, to: f.room)

            // The two messages after `origin`, as Alice received them, and nothing of her own join.
            let replayed = try await f.store.join(f.room, user: f.alice.id, socket: "a1", catchingUp: .events(after: origin, most: 10))
            guard case .replay(let offset, let frames) = replayed.caughtUp else { Issue.record("no replay: \(String(describing: replayed.caughtUp))"); return }
            #expect(frames.map { String(buffer: $0) }.map { $0.contains("\"text\":\"two\"") || $0.contains("\"text\":\"three\"") } == [true, true])
            #expect(frames.count == 2)
            #expect(replayed.announced)
            #expect(try #require(StreamOffset(offset)) < (try #require(StreamOffset(replayed.offset))), "the join's own room:presence comes after what was replayed")

            // Too many to replay, an offset from elsewhere, or none asked: the room's elements.
            for catchUp: PresenceStore.CatchUp in [.events(after: origin, most: 1), .events(after: "9999999999999-0", most: 10), .snapshot] {
                let joined = try await f.store.join(f.room, user: f.bob.id, socket: "b1", catchingUp: catchUp)
                guard case .snapshot(let at, let elements) = joined.caughtUp else { Issue.record("\(catchUp): no snapshot"); continue }
                #expect(String(buffer: elements) == "[]")
                #expect(try #require(StreamOffset(at)) <= (try #require(StreamOffset(joined.offset))), "\(catchUp): current at \(at), joined at \(joined.offset)")
            }
            #expect(try await f.store.join(f.room, user: f.carol.id, socket: "c1").caughtUp == nil)
            await expectRoomcastError(.notFound) { try await f.store.join(.random(), user: f.alice.id, socket: "a2", catchingUp: .snapshot) }
        }
    }
}
