import RedisClient
import RoomcastCore
import RoomcastTestSupport
import Testing

@Suite("Chat history against a real redis-server")
struct MessageHistoryTests {
    @Test("history pages newest first by cursor, each message with its sender, participants only")
    func pagesNewestFirst() async throws {
        try await withTestRedis { redis, _ in
            let f = try await MessageStoreTests.fixture(redis)
            let store = MessageStore(redis: redis)
            var sent: [Message] = []
            for index in 0..<5 {
                let sender = index.isMultiple(of: 2) ? f.alice : f.bob
                sent.append(try await store.send("message \(index)", from: sender, to: f.room.id).message)
            }
            let first = try await store.history(of: f.room.id, for: f.bob.id, before: nil, limit: 2)
            #expect(first.messages.map(\.text) == ["message 4", "message 3"])
            let cursor = try #require(first.nextCursor)
            let second = try await store.history(of: f.room.id, for: f.bob.id, before: cursor, limit: 2)
            #expect(second.messages.map(\.text) == ["message 2", "message 1"])
            let last = try await store.history(of: f.room.id, for: f.alice.id, before: second.nextCursor, limit: 2)
            #expect(last.messages.map(\.text) == ["message 0"])
            #expect(last.nextCursor == nil)
            // Each as sent: id, room, sender and the sender's profile.
            let all = first.messages + second.messages + last.messages
            #expect(all.map(\.id) == sent.reversed().map(\.id))
            #expect(all.allSatisfy { $0.roomId == f.room.id && $0.user.id == $0.userId })
            #expect(all.map(\.createdAt) == sent.reversed().map(\.createdAt))

            let forbidden = await #expect(throws: RoomcastError.self) { try await store.history(of: f.room.id, for: f.eve.id, before: nil, limit: 10) }
            #expect(forbidden?.code == .forbidden)
            let missing = await #expect(throws: RoomcastError.self) { try await store.history(of: .random(), for: f.alice.id, before: nil, limit: 10) }
            #expect(missing?.code == .notFound)
            let bad = await #expect(throws: RoomcastError.self) { try await store.history(of: f.room.id, for: f.alice.id, before: "nope", limit: 10) }
            #expect(bad?.code == .invalidPayload)
        }
    }

    @Test("a room keeps exactly messagesKept messages, the oldest go first")
    func retention() async throws {
        try await withTestRedis { redis, _ in
            let f = try await MessageStoreTests.fixture(redis)
            var store = MessageStore(redis: redis)
            store.messagesKept = 3
            for index in 0..<7 { _ = try await store.send("m\(index)", from: f.alice, to: f.room.id) }
            #expect(try await redis.send("XLEN", RedisKeys.roomMessages(f.room.id)) == .integer(3))
            let page = try await store.history(of: f.room.id, for: f.alice.id, before: nil, limit: 100)
            #expect(page.messages.map(\.text) == ["m6", "m5", "m4"])
            #expect(page.nextCursor == nil)
        }
    }
}
