import NIOCore
import RedisClient
@testable import RoomcastCore
import RoomcastTestSupport
import Testing

@Suite("MessageStore against a real redis-server")
struct MessageStoreTests {
    /// `message:new {roomId, message, offset}`.
    struct MessageNew: Decodable {
        var roomId: RoomID
        var message: Message
        var offset: String
    }

    /// Alice and Bob in one room, and Eve in none.
    struct Fixture: Sendable {
        var alice: User
        var bob: User
        var eve: User
        var room: Room
    }

    static func fixture(_ redis: any RedisClientProtocol) async throws -> Fixture {
        let users = UserStore(redis: redis)
        let alice = try await users.create(username: "alice", passwordHash: "h", displayName: "Alice")
        let bob = try await users.create(username: "bob", passwordHash: "h", displayName: nil)
        let eve = try await users.create(username: "eve", passwordHash: "h", displayName: nil)
        let room = try await RoomStore(redis: redis).create(by: alice.id, with: [bob.id], name: nil)
        return Fixture(alice: alice, bob: bob, eve: eve, room: room)
    }

    /// The last entry of the room's event stream.
    static func lastEvent(_ redis: any RedisClientProtocol, _ room: RoomID) async throws -> StreamEntry {
        let reply = try await redis.send("XREVRANGE", RedisKeys.roomStream(room), "+", "-", "COUNT", 1)
        return try #require(try StreamEntry.entries(reply).first)
    }

    @Test("message:new's payload, spliced around the message encoded once, is what its Encodable type encodes to")
    func newMessagePayloadIsTheEncodedPayload() throws {
        let sender = User(id: .random(), username: "ana", displayName: #"Ana "the" \ Ñ"#, createdAt: .now())
        let room = RoomID.random()
        let message = Message(id: .random(), roomId: room, userId: sender.id, text: "line\none \u{1F600} \"quoted\" </script>", createdAt: .now(), user: sender)
        let spliced = MessageStore.newMessagePayload(try JSONCoding.encode(message), in: room)
        #expect(String(buffer: spliced) == String(buffer: try JSONCoding.encode(MessageNewPayload(roomId: room, message: message))))
    }

    @Test("send stores the message, appends the event and publishes '<offset> <frame>' on the room channel")
    func sendStoresAndPublishes() async throws {
        try await withTestRedis { redis, server in
            let f = try await Self.fixture(redis)
            let channel = RedisKeys.roomChannel(f.room.id)
            try await withSubscriber(server, to: [channel]) { inbox in
                let (message, offset) = try await MessageStore(redis: redis).send("hello there", from: f.bob, to: f.room.id)
                #expect(message.text == "hello there")
                #expect(message.roomId == f.room.id)
                #expect(message.userId == f.bob.id)
                #expect(message.user == f.bob)

                let event = try await Self.lastEvent(redis, f.room.id)
                #expect(event.id == offset)
                #expect(StreamID(offset) != nil)
                let p = try #require(event.fields["p"])
                let s = try #require(event.fields["s"])
                #expect(Set(event.fields.keys) == ["p", "s"])

                let published = try #require(try await inbox.wait(for: 1).first)
                #expect(published.channel == channel)
                #expect(String(buffer: published.payload) == offset + " " + p + offset + s)
                let envelope = try #require(EventEnvelope(payload: published.payload))
                #expect(envelope.offset.map(String.init) == offset)
                #expect(String(buffer: envelope.frame) == p + offset + s)

                let parsed = try ParsedEventFrame(envelope.frame)
                #expect(parsed.name == "message:new")
                #expect(Set(parsed.payload.keys) == ["roomId", "message", "offset"])
                #expect(parsed.payload["roomId"] as? String == f.room.id.rawValue)
                #expect(parsed.payload["offset"] as? String == offset)
                let decoded = try DecodedEvent<MessageNew>(frame: envelope.frame)
                #expect(decoded.payload.message == message)
                #expect(decoded.payload.roomId == f.room.id)

                let stored = try StreamEntry.entries(try await redis.send("XRANGE", RedisKeys.roomMessages(f.room.id), "-", "+"))
                #expect(stored.count == 1)
                #expect(
                    stored.first?.fields == [
                        "id": message.id.rawValue, "userId": f.bob.id.rawValue, "text": "hello there",
                        "createdAt": String(message.createdAt.milliseconds),
                    ]
                )
            }
        }
    }

    @Test("offsets strictly increase across 50 sends and match the stream")
    func offsetsIncrease() async throws {
        try await withTestRedis { redis, _ in
            let f = try await Self.fixture(redis)
            let store = MessageStore(redis: redis)
            var offsets: [String] = []
            for index in 0..<50 {
                offsets.append(try await store.send("message \(index)", from: index.isMultiple(of: 2) ? f.alice : f.bob, to: f.room.id).offset)
            }
            let ids = offsets.compactMap(StreamID.init)
            #expect(ids.count == 50)
            #expect(zip(ids, ids.dropFirst()).allSatisfy { $0 < $1 })
            let stream = try StreamEntry.entries(try await redis.send("XRANGE", RedisKeys.roomStream(f.room.id), "-", "+"))
            #expect(stream.map(\.id) == offsets)
            let messages = try StreamEntry.entries(try await redis.send("XRANGE", RedisKeys.roomMessages(f.room.id), "-", "+"))
            #expect(messages.map { $0.fields["text"] } == (0..<50).map { "message \($0)" })
        }
    }

    @Test("20 concurrent sends get 20 distinct offsets, published in stream order")
    func concurrentSends() async throws {
        try await withTestRedis(poolSize: 4) { redis, server in
            let f = try await Self.fixture(redis)
            let channel = RedisKeys.roomChannel(f.room.id)
            try await withSubscriber(server, to: [channel]) { inbox in
                let store = MessageStore(redis: redis)
                let offsets = try await withThrowingTaskGroup(of: String.self) { group in
                    for index in 0..<20 {
                        group.addTask { try await store.send("concurrent \(index)", from: index < 10 ? f.alice : f.bob, to: f.room.id).offset }
                    }
                    return try await group.reduce(into: [String]()) { $0.append($1) }
                }
                #expect(Set(offsets).count == 20)

                let published = try await inbox.wait(for: 20)
                #expect(published.count == 20)
                let envelopes = try published.map { try #require(EventEnvelope(payload: $0.payload)) }
                let publishedOffsets = envelopes.compactMap { $0.offset.map(String.init) }
                let stream = try StreamEntry.entries(try await redis.send("XRANGE", RedisKeys.roomStream(f.room.id), "-", "+"))
                #expect(publishedOffsets == stream.map(\.id))
                #expect(Set(publishedOffsets) == Set(offsets))
                for (envelope, entry) in zip(envelopes, stream) {
                    #expect(String(buffer: envelope.frame) == (entry.fields["p"] ?? "") + entry.id + (entry.fields["s"] ?? ""))
                }
                let ids = publishedOffsets.compactMap(StreamID.init)
                #expect(zip(ids, ids.dropFirst()).allSatisfy { $0 < $1 })
            }
        }
    }

    @Test("a non-participant is forbidden and an unknown room is not_found; nothing is written")
    func refusals() async throws {
        try await withTestRedis { redis, server in
            let f = try await Self.fixture(redis)
            let store = MessageStore(redis: redis)
            await expectRoomcastError(.forbidden) { try await store.send("hi", from: f.eve, to: f.room.id) }
            let unknown = RoomID.random()
            await expectRoomcastError(.notFound) { try await store.send("hi", from: f.alice, to: unknown) }
            #expect(try await redis.send(RedisCommand("EXISTS", RedisKeys.roomStream(f.room.id), RedisKeys.roomMessages(f.room.id)), as: Int.self) == 0)
            #expect(try await server.keys(matching: "room:{\(unknown)}*") == [])
        }
    }

    @Test("text must be 1 to 16000 bytes of UTF-8, however few characters they make")
    func textLength() async throws {
        try await withTestRedis { redis, _ in
            let f = try await Self.fixture(redis)
            let store = MessageStore(redis: redis)
            await expectRoomcastError(.invalidPayload) { try await store.send("", from: f.alice, to: f.room.id) }
            await expectRoomcastError(.invalidPayload) { try await store.send(String(repeating: "x", count: 16_001), from: f.alice, to: f.room.id) }
            await expectRoomcastError(.invalidPayload) { try await store.send(String(repeating: "é", count: 8001), from: f.alice, to: f.room.id) }
            // One character: a letter and 8,000 combining marks, 16,001 bytes.
            await expectRoomcastError(.invalidPayload) { try await store.send("a" + String(repeating: "\u{0301}", count: 8000), from: f.alice, to: f.room.id) }
            // Refused before reaching Redis: even an outsider to an unknown room gets invalid_payload.
            await expectRoomcastError(.invalidPayload) { try await store.send("", from: f.eve, to: .random()) }

            let longest = String(repeating: "x", count: 16_000)
            let sent = try await store.send(longest, from: f.alice, to: f.room.id)
            #expect(sent.message.text == longest)
            let emoji = String(repeating: "🎉", count: 4000)
            #expect(try await store.send(emoji, from: f.alice, to: f.room.id).message.text == emoji)
            let stored = try StreamEntry.entries(try await redis.send("XRANGE", RedisKeys.roomMessages(f.room.id), "-", "+"))
            #expect(stored.map { $0.fields["text"] } == [longest, emoji])
        }
    }

    @Test("quotes, backslashes, newlines, control characters and emoji survive into a valid JSON frame")
    func specialCharacters() async throws {
        let text = "He said \"hi\" \\o/ \\n not a newline\nreal newline\r\ttab \u{1} ctrl </script> 🎉👩‍👩‍👧 é 日本 \u{2028}"
        try await withTestRedis { redis, server in
            let f = try await Self.fixture(redis)
            try await withSubscriber(server, to: [RedisKeys.roomChannel(f.room.id)]) { inbox in
                let (message, offset) = try await MessageStore(redis: redis).send(text, from: f.alice, to: f.room.id)
                let published = try #require(try await inbox.wait(for: 1).first)
                let envelope = try #require(EventEnvelope(payload: published.payload))
                let parsed = try ParsedEventFrame(envelope.frame)
                let messageObject = try #require(parsed.payload["message"] as? [String: Any])
                #expect(messageObject["text"] as? String == text)
                #expect(parsed.payload["offset"] as? String == offset)
                #expect(try DecodedEvent<MessageNew>(frame: envelope.frame).payload.message == message)

                let event = try await Self.lastEvent(redis, f.room.id)
                #expect(try ParsedEventFrame((event.fields["p"] ?? "") + offset + (event.fields["s"] ?? "")).payload["offset"] as? String == offset)
                let stored = try StreamEntry.entries(try await redis.send("XRANGE", RedisKeys.roomMessages(f.room.id), "-", "+"))
                #expect(stored.first?.fields["text"] == text)
            }
        }
    }
}
