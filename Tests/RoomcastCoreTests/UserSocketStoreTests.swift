import RedisClient
import RoomcastCore
import RoomcastTestSupport
import Testing

/// UserSocketStore on a real Redis: the per-user socket count behind `socket.max_per_user`.
@Suite("UserSocketStore against a real redis-server")
struct UserSocketStoreTests {
    static let alice = UserID("alice-sockets")!
    static let bob = UserID("bob-sockets")!

    /// The sockets counted for `user` with their expiries.
    static func sockets(_ redis: any RedisClientProtocol, _ user: UserID) async throws -> [String: Int] {
        let flat = try await redis.send(RedisCommand("ZRANGE", RedisKeys.userSockets(user), 0, -1, "WITHSCORES"), as: [String].self)
        return Dictionary(uniqueKeysWithValues: stride(from: 0, to: flat.count, by: 2).map { (flat[$0], Int(flat[$0 + 1])!) })
    }

    @Test("open counts sockets up to the limit, per user; reopening a counted socket is no new one; close frees a place")
    func limit() async throws {
        try await withTestRedis { redis, _ in
            let store = UserSocketStore(redis: redis)
            try await store.open("s1", of: Self.alice, limit: 2)
            try await store.open("s2", of: Self.alice, limit: 2)
            try await store.open("s2", of: Self.alice, limit: 2)
            let error = await #expect(throws: RoomcastError.self) { try await store.open("s3", of: Self.alice, limit: 2) }
            #expect(error?.code == .limitExceeded)
            #expect(error?.message.contains("2") == true)
            #expect(try await Self.sockets(redis, Self.alice).keys.sorted() == ["s1", "s2"])
            // Another user has a count of its own.
            try await store.open("s1", of: Self.bob, limit: 1)
            try await store.close("s1", of: Self.alice)
            try await store.open("s3", of: Self.alice, limit: 2)
            #expect(try await Self.sockets(redis, Self.alice).keys.sorted() == ["s2", "s3"])
        }
    }

    @Test("a refresh extends every socket of every user in one round trip and revives none that closed")
    func refresh() async throws {
        try await withTestRedis { redis, _ in
            // A lifetime no step of a loaded machine outlasts: a socket that lapsed before the
            // refresh would rightly not be revived.
            let store = UserSocketStore(redis: redis, lifetime: .seconds(60))
            for socket in ["a1", "a2", "a3"] { try await store.open(socket, of: Self.alice, limit: 3) }
            try await store.open("b1", of: Self.bob, limit: 3)
            let before = try await Self.sockets(redis, Self.alice)
            try await store.close("a3", of: Self.alice)
            try await Task.sleep(for: .milliseconds(50))
            let gone = try await store.refresh([Self.alice: ["a1", "a2", "a3"], Self.bob: ["b1"]])
            #expect(gone == [Self.alice: ["a3"]], "the closed socket is reported gone, not revived")
            let after = try await Self.sockets(redis, Self.alice)
            #expect(after.keys.sorted() == ["a1", "a2"])
            for socket in ["a1", "a2"] {
                #expect(try #require(after[socket]) > (try #require(before[socket])), "\(socket) extended")
            }
            #expect(try await Self.sockets(redis, Self.bob).keys.sorted() == ["b1"])
            let ttl = try await redis.send(RedisCommand("PTTL", RedisKeys.userSockets(Self.alice)), as: Int.self)
            #expect((1...60_000).contains(ttl), "\(ttl)")
        }
    }

    @Test("sockets Redis lost are reported by a refresh and counted again by restore, for another lifetime")
    func restore() async throws {
        try await withTestRedis { redis, _ in
            let store = UserSocketStore(redis: redis, lifetime: .seconds(60))
            try await store.open("a1", of: Self.alice, limit: 3)
            try await store.open("a2", of: Self.alice, limit: 3)
            // Lost, as a restart without a full AOF or an expiry while Redis was away loses them.
            _ = try await redis.send(RedisCommand("DEL", RedisKeys.userSockets(Self.alice)))
            let gone = try await store.refresh([Self.alice: ["a1", "a2"]])
            #expect(gone == [Self.alice: ["a1", "a2"]])
            #expect(try await Self.sockets(redis, Self.alice).isEmpty, "a refresh alone revives nothing")
            try await store.restore(gone)
            #expect(try await Self.sockets(redis, Self.alice).keys.sorted() == ["a1", "a2"])
            let ttl = try await redis.send(RedisCommand("PTTL", RedisKeys.userSockets(Self.alice)), as: Int.self)
            #expect((1...60_000).contains(ttl), "\(ttl)")
        }
    }

    @Test("a socket nobody refreshes stops counting after its lifetime: its user can connect again")
    func expiry() async throws {
        try await withTestRedis { redis, _ in
            // Connected before the clock matters: expiries are computed when a call starts, and a
            // loaded machine can take seconds to connect.
            _ = try await redis.send("PING")
            // 8 s: the refusal right after the open has seconds of margin on a loaded machine.
            let lifetime = Duration.seconds(8)
            let store = UserSocketStore(redis: redis, lifetime: lifetime)
            try await store.open("a1", of: Self.alice, limit: 1)
            await #expect(throws: RoomcastError.self) { try await store.open("a2", of: Self.alice, limit: 1) }
            // Accepted once the lifetime passed (polled, so a slow machine only waits longer).
            try await Task.sleep(for: lifetime)
            #expect(try await eventually(within: .seconds(30)) { (try? await store.open("a2", of: Self.alice, limit: 1)) != nil })
            #expect(try await Self.sockets(redis, Self.alice).keys.sorted() == ["a2"])
        }
    }
}
