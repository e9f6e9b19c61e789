import Foundation
import NIOCore
import RedisClient
import RoomcastCore
import RoomcastTestSupport
import Testing

/// `requestId` on element:create, message:send and reaction toggles: a retry returns the first
/// result and changes nothing — no second element, message, event or toggle.
@Suite("Idempotent retries against a real redis-server")
struct IdempotentRetryTests {
    static func streamLength(_ redis: any RedisClientProtocol, _ room: RoomID) async throws -> Int {
        try Int(redisReply: try await redis.send(RedisCommand("XLEN", RedisKeys.roomStream(room))))
    }

    @Test("creating an element twice with one requestId creates one element and one event; another id creates another")
    func createElement() async throws {
        try await withTestRedis { redis, server in
            let f = try await ReactionStoreTests.fixture(redis)
            let request = try #require(RequestID("create-1"))
            try await withSubscriber(server, to: [RedisKeys.userChannel(f.bob.id)]) { inbox in
                let before = try await Self.streamLength(redis, f.room)
                // Through RoomChanges, which publishes the participants' element:created:global.
                let changes = RoomChanges(redis: redis)
                let first = try await changes.createElement(try ElementStoreTests.note(), by: f.alice, in: f.room, requestId: request)
                let retry = try await changes.createElement(try ElementStoreTests.note(x: 99), by: f.alice, in: f.room, requestId: request)
                #expect(retry == first)
                #expect(try await Self.streamLength(redis, f.room) == before + 1)
                let snapshot = try await f.elements.snapshot(of: f.room, for: f.alice.id)
                #expect(snapshot.elements.count == 2, "the fixture's note and one more")
                // Bob's element:created:global came once.
                let globals = try await NotificationFixture.settle(inbox, redis, on: RedisKeys.userChannel(f.bob.id))
                #expect(globals.count == 1)

                let other = try await f.elements.create(try ElementStoreTests.note(), by: f.alice, in: f.room, requestId: RequestID("create-2"))
                #expect(other.id != first.id)
                // The same id from another user is another request.
                let bobs = try await f.elements.create(try ElementStoreTests.note(), by: f.bob, in: f.room, requestId: request)
                #expect(bobs.id != first.id)
                #expect(try await f.elements.snapshot(of: f.room, for: f.alice.id).elements.count == 4)
            }
            // Recorded for a day, in the room's slot.
            let ttl = try Int(redisReply: try await redis.send(RedisCommand("TTL", RedisKeys.roomRequest(f.room, user: f.alice.id, operation: .elementCreate, request: request))))
            #expect((86_000...86_400).contains(ttl))
        }
    }

    @Test("sending a message twice with one requestId stores and publishes it once and returns the first message")
    func sendMessage() async throws {
        try await withTestRedis { redis, _ in
            let f = try await ReactionStoreTests.fixture(redis)
            let messages = MessageStore(redis: redis)
            let request = try #require(RequestID("msg-1"))
            let first = try await messages.send("hello", from: f.bob, to: f.room, requestId: request)
            let retry = try await messages.send("hello", from: f.bob, to: f.room, requestId: request)
            #expect(retry.message == first.message)
            #expect(retry.offset == first.offset)
            let stored = try Int(redisReply: try await redis.send(RedisCommand("XLEN", RedisKeys.roomMessages(f.room))))
            #expect(stored == 1)
            // Texts that look like numbers survive the recorded reply.
            let numeric = try await messages.send("12345", from: f.bob, to: f.room, requestId: RequestID("msg-2"))
            #expect(try await messages.send("12345", from: f.bob, to: f.room, requestId: RequestID("msg-2")).message == numeric.message)
        }
    }

    @Test("a retried toggle does not toggle back: same answer, still one heart, and no subject to notify")
    func toggleReaction() async throws {
        try await withTestRedis { redis, _ in
            let f = try await ReactionStoreTests.fixture(redis)
            let request = try #require(RequestID("heart-1"))
            let first = try await f.reactions.toggle(on: f.element.id, by: f.bob, in: f.room, requestId: request)
            #expect(first.action == "added")
            #expect(first.subject?.elementCreator == f.alice.id)
            let before = try await Self.streamLength(redis, f.room)
            let retry = try await f.reactions.toggle(on: f.element.id, by: f.bob, in: f.room, requestId: request)
            #expect(retry.action == first.action)
            #expect(retry.reaction == first.reaction)
            #expect(retry.elementStats == first.elementStats)
            #expect(retry.subject == nil)
            #expect(try await Self.streamLength(redis, f.room) == before)
            let hearts = try await LiveFixture.hash(redis, f.reactionsKey)
            #expect(Set(hearts.keys) == [f.bob.id.rawValue])
            // A new request id toggles for real.
            #expect(try await f.reactions.toggle(on: f.element.id, by: f.bob, in: f.room, requestId: RequestID("heart-2")).action == "removed")
        }
    }

    @Test("a retry is still checked: a non-participant with someone's request id gets forbidden")
    func retryIsAuthorized() async throws {
        try await withTestRedis { redis, _ in
            let f = try await ReactionStoreTests.fixture(redis)
            let request = try #require(RequestID("create-1"))
            _ = try await f.elements.create(try ElementStoreTests.note(), by: f.alice, in: f.room, requestId: request)
            await expectRoomcastError(.forbidden) {
                try await f.elements.create(try ElementStoreTests.note(), by: f.eve, in: f.room, requestId: request)
            }
        }
    }
}
