import NIOCore
import RedisClient
import RoomcastCore
import RoomcastTestSupport
import Testing

@Suite("RoomStore against a real redis-server")
struct RoomStoreTests {
    /// `room:created {room}` as it arrives on a user channel.
    struct RoomCreated: Decodable {
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

    @Test("a participant without an account is not_found and no room is written")
    func unknownParticipant() async throws {
        try await withTestRedis { redis, server in
            let users = try await Self.makeUsers(redis, "alice", "bob")
            let store = RoomStore(redis: redis)
            await expectRoomcastError(.notFound) { try await store.create(by: users[0].id, with: [users[1].id, .random()], name: nil) }
            await expectRoomcastError(.notFound) { try await store.create(by: .random(), with: [users[1].id], name: nil) }
            #expect(try await server.keys(matching: "room:*") == [])
            #expect(try await server.keys(matching: "user:*:rooms") == [])
        }
    }

    @Test("create writes the room hash, the participant set and every participant's room list")
    func createWritesKeys() async throws {
        try await withTestRedis { redis, _ in
            let users = try await Self.makeUsers(redis, "alice", "bob", "carol")
            let room = try await RoomStore(redis: redis).create(by: users[0].id, with: [users[1].id, users[2].id], name: "Trip")
            #expect(room.participants == users)
            #expect(room.createdBy == users[0].id)
            #expect(room.name == "Trip")
            #expect(!room.isActive, "nobody has a new room open")
            #expect(room.elementCount == 0)
            #expect(room.createdAt == room.updatedAt)

            let ms = String(room.createdAt.milliseconds)
            let fields = try await redis.send("HGETALL", RedisKeys.room(room.id)).fields
            #expect(
                fields == [
                    "id": room.id.rawValue, "name": "Trip", "createdBy": users[0].id.rawValue,
                    "createdAt": ms, "updatedAt": ms, "elementCount": "0",
                ]
            )
            let members = try await redis.send(RedisCommand("SMEMBERS", RedisKeys.roomParticipants(room.id)), as: [String].self)
            #expect(Set(members) == Set(users.map(\.id.rawValue)))
            #expect(members.count == 3)
            for user in users {
                let rooms = try await redis.send(RedisCommand("ZRANGE", RedisKeys.userRooms(user.id), 0, -1, "WITHSCORES"), as: [String].self)
                #expect(rooms == [room.id.rawValue, ms], "\(user.username)")
            }
        }
    }

    @Test("a room created through RoomChanges: room:created reaches every other participant's user channel, not the creator's")
    func publishesRoomCreated() async throws {
        try await withTestRedis { redis, server in
            let users = try await Self.makeUsers(redis, "alice", "bob", "carol")
            let channels = users.map { RedisKeys.userChannel($0.id) }
            try await withSubscriber(server, to: channels) { inbox in
                let room = try await RoomChanges(redis: redis).createRoom(by: users[0].id, with: [users[1].id, users[2].id], name: nil)
                // A marker published after the room shows that nothing for the creator came before it.
                try await TestNode.publish("marker", on: channels[0], in: redis)
                // The others get their notifications' events too (`notification:new` …).
                let isRoomCreated = { (message: RedisPubSubMessage) in String(buffer: message.payload).contains(#"42["room:created""#) }
                let received = try await inbox.wait { messages in
                    messages.contains { $0.channel == channels[0] } && messages.filter { $0.channel != channels[0] && isRoomCreated($0) }.count >= 2
                }
                #expect(received.filter { $0.channel == channels[0] }.map { String(buffer: $0.payload) } == ["marker"])
                for channel in channels.dropFirst() {
                    let messages = received.filter { $0.channel == channel && isRoomCreated($0) }
                    try #require(messages.count == 1, "\(channel)")
                    let envelope = try #require(EventEnvelope(payload: messages[0].payload))
                    // Offset of the recipient's own stream (user:{<id>}:stream).
                    #expect(envelope.offset.flatMap(StreamOffset.init) != nil)
                    #expect(String(buffer: envelope.frame).hasPrefix(#"42["room:created",{"room":{"#))
                    let parsed = try ParsedEventFrame(envelope.frame)
                    #expect(parsed.name == "room:created")
                    #expect(Set(parsed.payload.keys) == ["room"])
                    let roomObject = try #require(parsed.payload["room"] as? [String: Any])
                    #expect(roomObject["id"] as? String == room.id.rawValue)
                    #expect(roomObject["createdBy"] as? String == users[0].id.rawValue)
                    let decoded = try DecodedEvent<RoomCreated>(frame: envelope.frame)
                    #expect(decoded.payload.room == room)
                }
            }
        }
    }

    @Test("a room created alone publishes nothing")
    func soloRoom() async throws {
        try await withTestRedis { redis, server in
            let alice = try await Self.makeUsers(redis, "alice")[0]
            try await withSubscriber(server, to: [RedisKeys.userChannel(alice.id)]) { inbox in
                let room = try await RoomChanges(redis: redis).createRoom(by: alice.id, with: [], name: nil)
                #expect(room.participants == [alice])
                try await TestNode.publish("marker", on: RedisKeys.userChannel(alice.id), in: redis)
                let received = try await inbox.wait(for: 1)
                #expect(received.map { String(buffer: $0.payload) } == ["marker"])
            }
        }
    }

    @Test("room(_:readBy:) gives participants the room, outsiders forbidden, unknown rooms not_found")
    func readBy() async throws {
        try await withTestRedis { redis, _ in
            let users = try await Self.makeUsers(redis, "alice", "bob", "eve")
            let store = RoomStore(redis: redis)
            let room = try await store.create(by: users[0].id, with: [users[1].id], name: nil)
            for reader in users[0...1] {
                let read = try await store.room(room.id, readBy: reader.id)
                #expect(read.id == room.id)
                #expect(read.name == nil)
                #expect(read.createdBy == room.createdBy)
                #expect(read.createdAt == room.createdAt)
                #expect(read.updatedAt == room.updatedAt)
                #expect(read.elementCount == 0)
                #expect(Set(read.participants) == Set(room.participants))
            }
            await expectRoomcastError(.forbidden) { try await store.room(room.id, readBy: users[2].id) }
            await expectRoomcastError(.forbidden) { try await store.room(room.id, readBy: .random()) }
            await expectRoomcastError(.notFound) { try await store.room(.random(), readBy: users[0].id) }
            #expect(try await store.room(.random()) == nil)
        }
    }

    @Test("membership tells participant, non-participant and missing room apart")
    func membership() async throws {
        try await withTestRedis { redis, _ in
            let users = try await Self.makeUsers(redis, "alice", "bob", "eve")
            let store = RoomStore(redis: redis)
            let room = try await store.create(by: users[0].id, with: [users[1].id], name: "x")
            #expect(try await store.membership(of: users[0].id, in: room.id) == .participant)
            #expect(try await store.membership(of: users[1].id, in: room.id) == .participant)
            #expect(try await store.membership(of: users[2].id, in: room.id) == .notParticipant)
            #expect(try await store.membership(of: users[0].id, in: .random()) == .noSuchRoom)
        }
    }

    @Test("duplicate participant ids, the creator's included, are collapsed")
    func duplicatesCollapsed() async throws {
        try await withTestRedis { redis, server in
            let users = try await Self.makeUsers(redis, "alice", "bob")
            let bobChannel = RedisKeys.userChannel(users[1].id)
            try await withSubscriber(server, to: [bobChannel]) { inbox in
                let room = try await RoomChanges(redis: redis).createRoom(
                    by: users[0].id, with: [users[1].id, users[1].id, users[0].id, users[1].id], name: nil
                )
                #expect(room.participants == users)
                #expect(try await redis.send(RedisCommand("SCARD", RedisKeys.roomParticipants(room.id)), as: Int.self) == 2)
                #expect(try await redis.send(RedisCommand("ZCARD", RedisKeys.userRooms(users[1].id)), as: Int.self) == 1)
                try await TestNode.publish("marker", on: bobChannel, in: redis)
                // Bob's room:created (and his notification's events), once, then the marker.
                let received = try await inbox.wait { messages in messages.contains { String(buffer: $0.payload) == "marker" } }
                #expect(received.filter { String(buffer: $0.payload).contains(#"42["room:created""#) }.count == 1)
                #expect(received.last.map { String(buffer: $0.payload) } == "marker")
            }
        }
    }

    @Test("the same people get a new room each time")
    func alwaysNewRoom() async throws {
        try await withTestRedis { redis, _ in
            let users = try await Self.makeUsers(redis, "alice", "bob")
            let store = RoomStore(redis: redis)
            let first = try await store.create(by: users[0].id, with: [users[1].id], name: nil)
            let second = try await store.create(by: users[0].id, with: [users[1].id], name: nil)
            #expect(first.id != second.id)
            #expect(try await redis.send(RedisCommand("ZCARD", RedisKeys.userRooms(users[1].id)), as: Int.self) == 2)
        }
    }
}
