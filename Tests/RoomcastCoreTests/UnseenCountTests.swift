import NIOCore
import RedisClient
import RoomcastCore
import RoomcastTestSupport
import Testing

/// Unseen counts on a real Redis: +1 per element (or message) for every participant other than
/// the author without a present socket in the room; never lowered by delete or clear; reset by
/// join; global events with absolute values per recipient, to participants only.
@Suite("Unseen counts against a real redis-server")
struct UnseenCountTests {
    struct Fixture: Sendable {
        var alice: User
        var bob: User
        var carol: User
        var eve: User
        var room: RoomID
        /// Element changes with their per-user events (`element:created:global` …).
        var changes: RoomChanges

        var participants: [User] { [alice, bob, carol] }
        var unseenKey: String { RedisKeys.roomUnseenElements(room) }
        var userChannels: [String] { [alice, bob, carol, eve].map { RedisKeys.userChannel($0.id) } }
    }

    /// Alice, Bob and Carol share a room; Eve shares none with them.
    static func fixture(_ redis: any RedisClientProtocol) async throws -> Fixture {
        let users = try await LiveFixture.users(redis, 4, prefix: "u")
        let room = try await RoomStore(redis: redis).create(by: users[0].id, with: [users[1].id, users[2].id], name: nil)
        return Fixture(alice: users[0], bob: users[1], carol: users[2], eve: users[3], room: room.id, changes: RoomChanges(redis: redis))
    }

    static func unseen(_ redis: any RedisClientProtocol, _ key: String) async throws -> [String: String] {
        try await LiveFixture.hash(redis, key)
    }

    /// Every participant's unseen messages by user id, as their room list shows them (derived
    /// from the room's message sequence and their read positions: no count is stored per user).
    static func unseenMessages(_ redis: any RedisClientProtocol, _ f: Fixture) async throws -> [UserID: Int] {
        var counts: [UserID: Int] = [:]
        for user in f.participants {
            counts[user.id] = try await RoomStore(redis: redis).listings(of: user.id).first { $0.room.id == f.room }?.badges.messages
        }
        return counts
    }

    /// The global events received so far, by recipient: (name, payload) in arrival order.
    static func globalEvents(_ inbox: MessageInbox, for user: User) throws -> [(name: String, payload: JSONValue)] {
        try inbox.publications(on: RedisKeys.userChannel(user.id)).map { publication in
            #expect(publication.offset.flatMap(StreamOffset.init) != nil, "per-user events carry the offset of the user's stream: \(publication.raw)")
            #expect(!publication.isPerRecipient)
            return try publication.event()
        }
    }

    /// Waits until every user in `counts` has `count` global events, then returns the last one of each.
    static func lastGlobal(_ inbox: MessageInbox, _ counts: [(User, Int)]) async throws -> [UserID: JSONValue] {
        _ = try await inbox.wait { messages in
            counts.allSatisfy { user, count in messages.filter { $0.channel == RedisKeys.userChannel(user.id) }.count >= count }
        }
        var result: [UserID: JSONValue] = [:]
        for (user, count) in counts {
            let events = try Self.globalEvents(inbox, for: user)
            #expect(events.count == count, "\(user.username): \(events.map(\.name))")
            result[user.id] = events.last?.payload
        }
        return result
    }

    @Test("a create counts for participants who are away, not for the creator or present users; each gets element:created:global")
    func createCountsAwayUsers() async throws {
        try await withTestRedis { redis, server in
            let f = try await Self.fixture(redis)
            // Bob has the room open (a node marked his socket present until a minute from now).
            try await LiveFixture.seedPresence(redis, f.room, f.bob.id)
            try await withSubscriber(server, to: f.userChannels) { inbox in
                let first = try await f.changes.createElement(try ElementStoreTests.note(), by: f.alice, in: f.room)
                #expect(try await Self.unseen(redis, f.unseenKey) == [f.carol.id.rawValue: "1"])
                var last = try await Self.lastGlobal(inbox, [(f.alice, 1), (f.bob, 1), (f.carol, 1)])
                for (user, unseen) in [(f.alice, 0), (f.bob, 0), (f.carol, 1)] {
                    #expect(
                        last[user.id] == [
                            "roomId": .string(f.room.rawValue), "elementId": .string(first.id.rawValue), "createdBy": .string(f.alice.id.rawValue),
                            "type": "note", "elementCount": 1, "unseenCount": .number(Double(unseen)),
                        ],
                        "\(user.username)"
                    )
                }

                // Bob creates: Alice is away now, Carol still.
                let second = try await f.changes.createElement(try ElementStoreTests.draft(#"{"type":"sticker","positionX":0,"positionY":0,"width":1,"height":1}"#), by: f.bob, in: f.room)
                #expect(try await Self.unseen(redis, f.unseenKey) == [f.carol.id.rawValue: "2", f.alice.id.rawValue: "1"])
                last = try await Self.lastGlobal(inbox, [(f.alice, 2), (f.bob, 2), (f.carol, 2)])
                #expect(last[f.alice.id]?["unseenCount"] == 1)
                #expect(last[f.bob.id]?["unseenCount"] == 0)
                #expect(last[f.carol.id]?["unseenCount"] == 2)
                #expect(last[f.carol.id]?["type"] == "sticker")
                #expect(last[f.carol.id]?["createdBy"].stringValue == f.bob.id.rawValue)
                #expect(last[f.carol.id]?["elementId"].stringValue == second.id.rawValue)
                #expect(Set(last.values.map { $0["elementCount"] }) == [2])

                // Eve, in no shared room, got nothing.
                try await inbox.fence(redis, on: f.userChannels)
                #expect(try inbox.publications(on: RedisKeys.userChannel(f.eve.id)).isEmpty)
            }
        }
    }

    @Test("an expired presence member counts as away; several sockets of one user count once")
    func expiredPresenceIsAway() async throws {
        try await withTestRedis { redis, _ in
            let f = try await Self.fixture(redis)
            let now = Timestamp.now().milliseconds
            try await LiveFixture.seedPresence(redis, f.room, f.bob.id, socket: "old", expiry: now - 1_000)
            try await LiveFixture.seedPresence(redis, f.room, f.carol.id, socket: "s1")
            try await LiveFixture.seedPresence(redis, f.room, f.carol.id, socket: "s2")
            _ = try await f.changes.createElement(try ElementStoreTests.note(), by: f.alice, in: f.room)
            _ = try await f.changes.createElement(try ElementStoreTests.note(), by: f.alice, in: f.room)
            #expect(try await Self.unseen(redis, f.unseenKey) == [f.bob.id.rawValue: "2"])
        }
    }

    @Test("delete and clear do not lower unseen counts; their global events carry the absolute counts")
    func deleteAndClearKeepCounts() async throws {
        try await withTestRedis { redis, server in
            let f = try await Self.fixture(redis)
            let a = try await f.changes.createElement(try ElementStoreTests.note(), by: f.alice, in: f.room)
            _ = try await f.changes.createElement(try ElementStoreTests.note(), by: f.alice, in: f.room)
            _ = try await f.changes.createElement(try ElementStoreTests.note(), by: f.bob, in: f.room)
            #expect(try await Self.unseen(redis, f.unseenKey) == [f.bob.id.rawValue: "2", f.carol.id.rawValue: "3", f.alice.id.rawValue: "1"])
            try await withSubscriber(server, to: f.userChannels) { inbox in
                #expect(try await f.changes.deleteElement(a.id, by: f.carol.id, in: f.room) == 2)
                #expect(try await Self.unseen(redis, f.unseenKey) == [f.bob.id.rawValue: "2", f.carol.id.rawValue: "3", f.alice.id.rawValue: "1"])
                var last = try await Self.lastGlobal(inbox, [(f.alice, 1), (f.bob, 1), (f.carol, 1)])
                for (user, unseen) in [(f.alice, 1), (f.bob, 2), (f.carol, 3)] {
                    #expect(
                        last[user.id] == [
                            "roomId": .string(f.room.rawValue), "elementId": .string(a.id.rawValue), "deletedBy": .string(f.carol.id.rawValue),
                            "elementCount": 2, "unseenCount": .number(Double(unseen)),
                        ],
                        "\(user.username)"
                    )
                }
                #expect(try Self.globalEvents(inbox, for: f.carol).map(\.name) == ["element:deleted:global"])

                #expect(try await f.changes.clearRoom(f.room, by: f.bob.id) == 2)
                #expect(try await Self.unseen(redis, f.unseenKey) == [f.bob.id.rawValue: "2", f.carol.id.rawValue: "3", f.alice.id.rawValue: "1"])
                last = try await Self.lastGlobal(inbox, [(f.alice, 2), (f.bob, 2), (f.carol, 2)])
                for (user, unseen) in [(f.alice, 1), (f.bob, 2), (f.carol, 3)] {
                    #expect(
                        last[user.id] == [
                            "roomId": .string(f.room.rawValue), "clearedBy": .string(f.bob.id.rawValue), "elementCount": 0,
                            "unseenCount": .number(Double(unseen)),
                        ],
                        "\(user.username)"
                    )
                }
                #expect(try Self.globalEvents(inbox, for: f.alice).map(\.name) == ["element:deleted:global", "room:cleared:global"])
                try await inbox.fence(redis, on: f.userChannels)
                #expect(try inbox.publications(on: RedisKeys.userChannel(f.eve.id)).isEmpty)
            }
        }
    }

    @Test("join resets both counts to 0 for the joiner only; while present, creates keep them at 0")
    func joinResets() async throws {
        try await withTestRedis { redis, server in
            let f = try await Self.fixture(redis)
            let presence = PresenceStore(redis: redis)
            for _ in 0..<3 { _ = try await f.changes.createElement(try ElementStoreTests.note(), by: f.alice, in: f.room) }
            for text in ["one", "two"] { _ = try await MessageStore(redis: redis).send(text, from: f.alice, to: f.room) }
            #expect(try await Self.unseen(redis, f.unseenKey) == [f.bob.id.rawValue: "3", f.carol.id.rawValue: "3"])
            #expect(try await Self.unseenMessages(redis, f) == [f.alice.id: 0, f.bob.id: 2, f.carol.id: 2])

            try await presence.join(f.room, user: f.carol.id, socket: "c1")
            #expect(try await Self.unseen(redis, f.unseenKey) == [f.bob.id.rawValue: "3", f.carol.id.rawValue: "0"])
            #expect(try await Self.unseenMessages(redis, f) == [f.alice.id: 0, f.bob.id: 2, f.carol.id: 0])

            try await withSubscriber(server, to: f.userChannels) { inbox in
                let element = try await f.changes.createElement(try ElementStoreTests.note(), by: f.bob, in: f.room)
                _ = try await MessageStore(redis: redis).send("three", from: f.bob, to: f.room)
                #expect(try await Self.unseen(redis, f.unseenKey) == [f.bob.id.rawValue: "3", f.carol.id.rawValue: "0", f.alice.id.rawValue: "1"])
                #expect(try await Self.unseenMessages(redis, f) == [f.alice.id: 1, f.bob.id: 2, f.carol.id: 0])
                let last = try await Self.lastGlobal(inbox, [(f.alice, 1), (f.bob, 1), (f.carol, 1)])
                #expect(last[f.carol.id]?["unseenCount"] == 0)
                #expect(last[f.carol.id]?["elementId"].stringValue == element.id.rawValue)
                #expect(last[f.alice.id]?["unseenCount"] == 1)
                #expect(last[f.bob.id]?["unseenCount"] == 3)
                #expect(last[f.bob.id]?["elementCount"] == 4)
            }

            // Carol leaves: away again, counting from 0.
            try await presence.leave(f.room, user: f.carol.id, socket: "c1")
            _ = try await f.changes.createElement(try ElementStoreTests.note(), by: f.bob, in: f.room)
            #expect(try await Self.unseen(redis, f.unseenKey)[f.carol.id.rawValue] == "1")
            #expect(try await Self.unseenMessages(redis, f)[f.carol.id] == 0)
            _ = try await MessageStore(redis: redis).send("four", from: f.bob, to: f.room)
            #expect(try await Self.unseenMessages(redis, f) == [f.alice.id: 2, f.bob.id: 2, f.carol.id: 1])
        }
    }

    @Test("message unseen counts: +1 for away participants other than the sender; present users and the sender stay")
    func messageCounts() async throws {
        try await withTestRedis { redis, _ in
            let f = try await Self.fixture(redis)
            let messages = MessageStore(redis: redis)
            try await PresenceStore(redis: redis).join(f.room, user: f.bob.id, socket: "b1")
            _ = try await messages.send("hi", from: f.alice, to: f.room)
            _ = try await messages.send("hello", from: f.alice, to: f.room)
            #expect(try await Self.unseenMessages(redis, f) == [f.alice.id: 0, f.bob.id: 0, f.carol.id: 2])
            _ = try await messages.send("yo", from: f.carol, to: f.room)
            #expect(try await Self.unseenMessages(redis, f) == [f.alice.id: 1, f.bob.id: 0, f.carol.id: 2])
            // Element and message counts are separate (Bob's join wrote his element count, 0).
            #expect(try await Self.unseen(redis, f.unseenKey) == [f.bob.id.rawValue: "0"])
            // A refused send counts nothing.
            await expectRoomcastError(.forbidden) { _ = try await messages.send("let me in", from: f.eve, to: f.room) }
            #expect(try await Self.unseenMessages(redis, f) == [f.alice.id: 1, f.bob.id: 0, f.carol.id: 2])
            // Join resets the message count too.
            try await PresenceStore(redis: redis).join(f.room, user: f.carol.id, socket: "c9")
            #expect(try await Self.unseenMessages(redis, f) == [f.alice.id: 1, f.bob.id: 0, f.carol.id: 0])
            // Bob, present, sends too: it counts for Alice, away, and not for him.
            _ = try await messages.send("bob is here", from: f.bob, to: f.room)
            #expect(try await Self.unseenMessages(redis, f) == [f.alice.id: 2, f.bob.id: 0, f.carol.id: 0])
            // Bob leaves: the messages sent while he was there, his own too, stay seen; the next
            // one counts.
            try await PresenceStore(redis: redis).leave(f.room, user: f.bob.id, socket: "b1")
            #expect(try await Self.unseenMessages(redis, f)[f.bob.id] == 0)
            _ = try await messages.send("after you left", from: f.alice, to: f.room)
            #expect(try await Self.unseenMessages(redis, f) == [f.alice.id: 2, f.bob.id: 1, f.carol.id: 0])
        }
    }

    @Test("a message costs Redis the same commands in a room of 2 as in a room of 16 away participants")
    func messageCostIndependentOfRoomSize() async throws {
        try await withTestRedis { redis, server in
            let users = try await LiveFixture.users(redis, 16, prefix: "size")
            let rooms = RoomStore(redis: redis)
            let pair = try await rooms.create(by: users[0].id, with: [users[1].id], name: nil)
            let crowd = try await rooms.create(by: users[0].id, with: users.dropFirst().map(\.id), name: nil)
            let messages = MessageStore(redis: redis)
            // Loads the script on the servers of both rooms (two masters in cluster mode), so the
            // runs below differ only in the room.
            for room in [pair, crowd] { _ = try await messages.send("warm up", from: users[0], to: room.id) }
            var commands: [[String: Int]] = []
            for room in [pair, crowd] {
                let before = try await Self.commandCalls(server)
                _ = try await messages.send("hello", from: users[0], to: room.id)
                commands.append(Self.difference(try await Self.commandCalls(server), before))
            }
            #expect(commands[0] == commands[1], "commands per message, room of 2 vs room of 16: \(commands)")
            #expect(commands[1]["hincrby", default: 0] <= 2, "\(commands[1])")
            // Yet every away participant's count is exact.
            for user in users.dropFirst() {
                #expect(try await rooms.listings(of: user.id).first { $0.room.id == crowd.id }?.badges.messages == 2, "\(user.username)")
            }
            #expect(try await rooms.listings(of: users[0].id).first { $0.room.id == crowd.id }?.badges.messages == 0)
        }
    }

    @Test("a socket whose presence expired (its node died) stops counting as present at the next message, not before")
    func expiredPresenceCountsFromTheNextMessage() async throws {
        try await withTestRedis { redis, server in
            let f = try await Self.fixture(redis)
            let messages = MessageStore(redis: redis)
            try await PresenceStore(redis: redis).join(f.room, user: f.bob.id, socket: "b1")
            _ = try await messages.send("while bob is here", from: f.alice, to: f.room)
            // Bob's node dies: nobody leaves for him, his member just expires.
            _ = try await redis.send(
                RedisCommand("ZADD", RedisKeys.roomPresence(f.room), "XX", Int(Timestamp.now().milliseconds) - 1, PresenceStore.member(user: f.bob.id, socket: "b1"))
            )
            #expect(try await Self.unseenMessages(redis, f)[f.bob.id] == 0)
            try await withSubscriber(server, to: [RedisKeys.roomChannel(f.room)]) { inbox in
                _ = try await messages.send("after bob's node died", from: f.alice, to: f.room)
                // The expiry is announced first, then the message.
                let published = try await inbox.publications(2)
                #expect(try published.map { try $0.event().name } == ["room:presence", "message:new"])
                #expect(try published[0].event().payload["activeUserIds"] == [])
                // message_send reads the room id from the room key.
                #expect(try published[0].event().payload["roomId"] == .string(f.room.rawValue))
            }
            #expect(try await Self.unseenMessages(redis, f) == [f.alice.id: 0, f.bob.id: 1, f.carol.id: 2])
        }
    }

    /// Calls per command on every server (`INFO commandstats`), less the client's own (the
    /// function call, health checks, slot map).
    static func commandCalls(_ server: TestRedis) async throws -> [String: Int] {
        let ignored: Set<String> = ["fcall", "fcall_ro", "function", "info", "ping", "cluster", "client", "config", "hello", "select"]
        var calls: [String: Int] = [:]
        for info in try await server.onEveryServer({ try await $0.send(RedisCommand("INFO", "commandstats")).string ?? "" }) {
            for line in info.split(whereSeparator: \.isNewline) where line.hasPrefix("cmdstat_") {
                let parts = line.dropFirst("cmdstat_".count).split(separator: ":", maxSplits: 1)
                // Subcommands count under `command|subcommand` (`function|load` on a master that
                // had not loaded the library yet, in cluster mode).
                guard parts.count == 2, let command = parts[0].split(separator: "|").first, !ignored.contains(command.lowercased()),
                    let field = parts[1].split(separator: ",").first(where: { $0.hasPrefix("calls=") }),
                    let count = Int(field.dropFirst("calls=".count))
                else { continue }
                calls[String(parts[0]).lowercased(), default: 0] += count
            }
        }
        return calls
    }

    static func difference(_ after: [String: Int], _ before: [String: Int]) -> [String: Int] {
        after.reduce(into: [:]) { result, entry in
            let delta = entry.value - before[entry.key, default: 0]
            if delta != 0 { result[entry.key] = delta }
        }
    }

    @Test("a refused create or delete counts nothing and sends no global event")
    func refusedChangesCountNothing() async throws {
        try await withTestRedis { redis, server in
            let f = try await Self.fixture(redis)
            try await withSubscriber(server, to: f.userChannels) { inbox in
                await expectRoomcastError(.forbidden) { try await f.changes.createElement(try ElementStoreTests.note(), by: f.eve, in: f.room) }
                await expectRoomcastError(.notFound) { try await f.changes.deleteElement(.random(), by: f.alice.id, in: f.room) }
                await expectRoomcastError(.forbidden) { try await f.changes.clearRoom(f.room, by: f.eve.id) }
                #expect(try await redis.send(RedisCommand("EXISTS", f.unseenKey), as: Int.self) == 0)
                try await inbox.fence(redis, on: f.userChannels)
                #expect(inbox.received.isEmpty)
            }
        }
    }
}
