import Foundation
import RedisClient
import RoomcastCore
import RoomcastTestSupport
import Testing

@Suite("RoomcastScripts")
struct RoomcastScriptsTests {
    @Test("every script is present, non-empty and distinct")
    func bundled() {
        // Every `.lua` file but the shared preludes (`_*.lua`) is one script, loaded once.
        let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../Sources/RoomcastCore/Scripts").standardizedFileURL
        let files = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        let scripts = files.filter { $0.hasSuffix(".lua") && !$0.hasPrefix("_") }.map { String($0.dropLast(4)) }
        #expect(scripts.count >= 9)
        #expect(RoomcastScripts.all.map(\.name).sorted() == scripts.sorted())
        #expect(RoomcastScripts.all.allSatisfy { !$0.source.isEmpty && $0.sha1.count == 40 })
        #expect(Set(RoomcastScripts.all.map(\.sha1)).count == RoomcastScripts.all.count)
    }

    @Test("all scripts load into a fresh Redis (a syntax check) under the SHA1 we computed")
    func loadIntoFreshRedis() async throws {
        try await withTestRedis { redis, _ in
            try await redis.load(RoomcastScripts.all)
            let exists = try await redis.send(RedisCommand("SCRIPT", ["EXISTS"] + RoomcastScripts.all.map(\.sha1)), as: [Int].self)
            #expect(exists == RoomcastScripts.all.map { _ in 1 })
        }
    }

    @Test("loading is a real syntax check: a broken script is refused")
    func brokenScriptRefused() async throws {
        try await withTestRedis { redis, _ in
            let broken = RedisScript(name: "broken", source: "if then return end end")
            await #expect(throws: RedisError.self) { try await redis.load([broken]) }
        }
    }

    @Test("the stores keep working after SCRIPT FLUSH")
    func surviveScriptFlush() async throws {
        try await withTestRedis { redis, server in
            try await redis.load(RoomcastScripts.all)
            let users = UserStore(redis: redis)
            let alice = try await users.create(username: "alice", passwordHash: "h", displayName: nil)
            let bob = try await users.create(username: "bob", passwordHash: "h", displayName: nil)
            let rooms = RoomStore(redis: redis)
            let messages = MessageStore(redis: redis)
            let first = try await rooms.create(by: alice.id, with: [bob.id], name: nil)
            _ = try await messages.send("before", from: alice, to: first.id)

            _ = try await server.onEveryServer { try await $0.send("SCRIPT", "FLUSH") }
            let exists = try await redis.send(RedisCommand("SCRIPT", ["EXISTS"] + RoomcastScripts.all.map(\.sha1)), as: [Int].self)
            #expect(exists == RoomcastScripts.all.map { _ in 0 })

            let second = try await rooms.create(by: bob.id, with: [alice.id], name: "again")
            let sent = try await messages.send("after", from: bob, to: second.id)
            #expect(try await rooms.room(second.id)?.name == "again")
            #expect(sent.message.text == "after")
            // Script errors still map to domain codes after the reload.
            _ = try await server.onEveryServer { try await $0.send("SCRIPT", "FLUSH") }
            await expectRoomcastError(.notFound) { try await messages.send("x", from: bob, to: .random()) }
        }
    }

    /// A retry of a per-user event whose first try ran but lost its reply (Redis died after it)
    /// must not append and publish the frame again: its client would get it twice
    /// (`tests/e2e/test_redis_crash_user_events.py` saw it once).
    @Test("user_event_publish: a retry finds its frame among the last entries and appends nothing; a first try always appends")
    func userEventRetryIsIdempotent() async throws {
        try await withTestRedis { redis, _ in
            let stream = RedisKeys.userStream(UserID("u-retry")!), channel = RedisKeys.userChannel(UserID("u-retry")!)
            let first = #"42["room:seen",{"roomId":"r1","unseenCount":0}]"#, second = #"42["room:seen",{"roomId":"r2","unseenCount":0}]"#
            func publish(_ frame: String, retry: Bool) async throws -> String {
                let reply = try await redis.evaluate(
                    RoomcastScripts.userEventPublish, keys: [stream], arguments: [channel, frame] + (retry ? ["1"] : [])
                )
                return try #require(reply.string)
            }
            let offset = try await publish(first, retry: false)
            #expect(try await publish(first, retry: true) == offset)
            #expect(try await redis.send(RedisCommand("XLEN", stream), as: Int.self) == 1)
            // Not appended before: a retry appends it.
            let other = try await publish(second, retry: true)
            #expect(other != offset)
            // A first try is a new event, even with the same bytes (another change's).
            #expect(try await publish(first, retry: false) != offset)
            #expect(try await redis.send(RedisCommand("XLEN", stream), as: Int.self) == 3)
        }
    }
}
