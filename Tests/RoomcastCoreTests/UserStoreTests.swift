import RedisClient
import RoomcastCore
import RoomcastTestSupport
import Testing

@Suite("UserStore against a real redis-server")
struct UserStoreTests {
    @Test("create writes the documented user hash and claims the lowercased username")
    func createWritesHash() async throws {
        try await withTestRedis { redis, _ in
            let store = UserStore(redis: redis)
            let before = Timestamp.now()
            let user = try await store.create(username: "Alice.B", passwordHash: "$2b$12$hash", displayName: "Alice B")
            #expect(user.username == "Alice.B")
            #expect(user.displayName == "Alice B")
            #expect(user.createdAt >= before && user.createdAt <= Timestamp.now())

            let fields = try await redis.send("HGETALL", RedisKeys.user(user.id)).fields
            #expect(
                fields == [
                    "id": user.id.rawValue, "username": "Alice.B", "displayName": "Alice B",
                    "passwordHash": "$2b$12$hash", "createdAt": String(user.createdAt.milliseconds),
                ]
            )
            #expect(try await redis.send(RedisCommand("GET", "username:{alice.b}"), as: String.self) == user.id.rawValue)
            #expect(try await store.user(user.id) == user)
        }
    }

    @Test("without a display name the hash has no displayName field")
    func createWithoutDisplayName() async throws {
        try await withTestRedis { redis, _ in
            let user = try await UserStore(redis: redis).create(username: "bob", passwordHash: "h", displayName: nil)
            let fields = try await redis.send("HGETALL", RedisKeys.user(user.id)).fields
            #expect(Set(fields.keys) == ["id", "username", "passwordHash", "createdAt"])
            #expect(user.displayName == nil)
        }
    }

    @Test("a taken username, in any case, is a conflict and leaves the first account alone")
    func duplicateUsername() async throws {
        try await withTestRedis { redis, server in
            let store = UserStore(redis: redis)
            let first = try await store.create(username: "alice", passwordHash: "first", displayName: nil)
            for name in ["alice", "ALICE", "Alice"] {
                await expectRoomcastError(.conflict) { try await store.create(username: name, passwordHash: "second", displayName: nil) }
            }
            #expect(try await server.keys(matching: "user:*") == [RedisKeys.user(first.id)])
            #expect(try await store.credentials(username: "alice")?.passwordHash == "first")
        }
    }

    @Test("an invalid username is refused before anything is written", arguments: ["ab", "a b", "al{ce}", "a:b", "jürgen", ""])
    func invalidUsername(_ name: String) async throws {
        try await withTestRedis { redis, server in
            await expectRoomcastError(.invalidPayload) {
                try await UserStore(redis: redis).create(username: name, passwordHash: "h", displayName: nil)
            }
            let keys = try await server.keys(matching: "*")
            #expect(keys == [])
        }
    }

    @Test("credentials(username:) returns the user and its hash, case-insensitively; unknown is nil")
    func credentials() async throws {
        try await withTestRedis { redis, _ in
            let store = UserStore(redis: redis)
            let user = try await store.create(username: "Carol", passwordHash: "$2b$hash", displayName: "C")
            let found = try #require(try await store.credentials(username: "Carol"))
            #expect(found.account.user == user)
            #expect(found.passwordHash == "$2b$hash")
            #expect(try await store.credentials(username: "carol")?.account.user == user)
            #expect(try await store.credentials(username: "nobody") == nil)
            #expect(try await store.credentials(username: "in valid") == nil)
        }
    }

    @Test("users([...]) keeps the requested order and skips missing ids")
    func usersInOrder() async throws {
        try await withTestRedis { redis, _ in
            let store = UserStore(redis: redis)
            let a = try await store.create(username: "user_a", passwordHash: "h", displayName: nil)
            let b = try await store.create(username: "user_b", passwordHash: "h", displayName: "B")
            let c = try await store.create(username: "user_c", passwordHash: "h", displayName: nil)
            let users = try await store.users([c.id, UserID.random(), a.id, b.id, UserID.random()])
            #expect(users == [c, a, b])
            #expect(try await store.users([]) == [])
            #expect(try await store.users([UserID.random()]) == [])
            #expect(try await store.user(UserID.random()) == nil)
        }
    }
}
