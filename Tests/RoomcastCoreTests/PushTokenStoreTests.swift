import Foundation
import NIOCore
import RedisClient
import RoomcastCore
import RoomcastTestSupport
import Testing

/// PushToken: what a device may register.
@Suite("PushToken validation")
struct PushTokenTests {
    static let valid: [(String, String)] = [
        (String(repeating: "0", count: 16), "ios"),
        (String(repeating: "ab", count: 32), "ios"),
        (String(repeating: "f", count: 512), "ios"),
        ("0123456789abcdef", "IOS"),
    ]

    @Test("16-512 hex digits and platform ios (any case) are accepted", arguments: valid)
    func accepts(_ token: String, _ platform: String) throws {
        let device = try PushToken(token: token, platform: platform)
        #expect(device.token == token)
        #expect(device.platform == "ios")
    }

    @Test("the token is lowercased, the platform normalised; JSON is {token, platform}")
    func normalises() throws {
        let device = try PushToken(token: "ABCDEF0123456789AbCdEf", platform: "iOS")
        #expect(device.token == "abcdef0123456789abcdef")
        #expect(device.platform == "ios")
        #expect(try NotificationFixture.json(device) == ["token": "abcdef0123456789abcdef", "platform": "ios"])
        #expect(device == (try PushToken(token: "abcdef0123456789abcdef", platform: "ios")))
    }

    static let invalid: [(String, String)] = [
        (String(repeating: "0", count: 15), "ios"),
        (String(repeating: "f", count: 513), "ios"),
        ("", "ios"),
        ("0123456789abcdeg", "ios"),
        ("0x0123456789abcdef", "ios"),
        ("0123456789abcdef 0123", "ios"),
        ("01234567-89ab-cdef-0123", "ios"),
        ("０１２３４５６７８９ａｂｃｄｅｆ", "ios"),
        ("0123456789abcdef", "android"),
        ("0123456789abcdef", ""),
        ("0123456789abcdef", " ios"),
        ("0123456789abcdef", "ios "),
    ]

    @Test("other tokens and platforms are invalid_payload", arguments: invalid)
    func refuses(_ token: String, _ platform: String) {
        do {
            _ = try PushToken(token: token, platform: platform)
            Issue.record("accepted \(token) / \(platform)")
        } catch {
            #expect((error as any Error as? RoomcastError)?.code == .invalidPayload, "\(error)")
        }
    }
}

/// PushTokenStore on a real Redis: one owner per token, removal, APNs' unregistered tokens.
@Suite("PushTokenStore against a real redis-server")
struct PushTokenStoreTests {
    struct Fixture: Sendable {
        var alice: User
        var bob: User
        var tokens: PushTokenStore
    }

    static func fixture(_ redis: any RedisClientProtocol) async throws -> Fixture {
        let users = try await LiveFixture.users(redis, 2, prefix: "push")
        return Fixture(alice: users[0], bob: users[1], tokens: PushTokenStore(redis: redis))
    }

    static func device(_ seed: Int) throws -> PushToken {
        try PushToken(token: NotificationFixture.token(seed), platform: "ios")
    }

    /// The stored record of `token` for `user`.
    static func record(_ redis: any RedisClientProtocol, _ user: UserID, _ token: String) async throws -> JSONValue? {
        guard let json = try await redis.send(RedisCommand("HGET", RedisKeys.userPushTokens(user), token), as: String?.self) else { return nil }
        return try JSONValue(json)
    }

    static func owner(_ redis: any RedisClientProtocol, _ token: String) async throws -> String? {
        try await redis.send(RedisCommand("GET", RedisKeys.pushTokenOwner(token)), as: String?.self)
    }

    @Test("register: the user's devices, a record {platform, updatedAt}, and the token's owner")
    func register() async throws {
        try await withTestRedis { redis, _ in
            let f = try await Self.fixture(redis)
            #expect(try await f.tokens.tokens(for: f.alice.id).isEmpty)
            let upper = NotificationFixture.token(2).uppercased()
            let second = try PushToken(token: upper, platform: "IOS")
            let first = try Self.device(1)
            let start = Timestamp.now().milliseconds
            try await f.tokens.register(second, for: f.alice.id)
            try await f.tokens.register(first, for: f.alice.id)
            let end = Timestamp.now().milliseconds

            let listed = try await f.tokens.tokens(for: f.alice.id)
            #expect(listed == [first, second].sorted { $0.token < $1.token })
            #expect(listed.allSatisfy { $0.platform == "ios" && $0.token == $0.token.lowercased() })
            #expect(try await NotificationFixture.hashKeys(redis, RedisKeys.userPushTokens(f.alice.id)) == [first.token, second.token])
            let record = try #require(try await Self.record(redis, f.alice.id, second.token))
            #expect(record.keys == ["platform", "updatedAt"])
            #expect(record["platform"] == "ios")
            let updatedAt = try #require(record["updatedAt"].intValue)
            #expect(updatedAt >= Int(start) && updatedAt <= Int(end))
            #expect(try await Self.owner(redis, first.token) == f.alice.id.rawValue)
            #expect(try await Self.owner(redis, second.token) == f.alice.id.rawValue)
            #expect(try await f.tokens.tokens(for: f.bob.id).isEmpty)

            // Registering again refreshes: one entry, a later updatedAt.
            try await Task.sleep(for: .milliseconds(5))
            try await f.tokens.register(second, for: f.alice.id)
            #expect(try await f.tokens.tokens(for: f.alice.id).count == 2)
            let refreshed = try #require(try await Self.record(redis, f.alice.id, second.token)?["updatedAt"].intValue)
            #expect(refreshed > updatedAt)
            #expect(try await Self.owner(redis, second.token) == f.alice.id.rawValue)
        }
    }

    @Test("a token registered by another user moves: the previous user loses it, and gets no more pushes on it")
    func moves() async throws {
        try await withTestRedis { redis, _ in
            let f = try await Self.fixture(redis)
            let shared = try Self.device(1)
            let alices = try Self.device(2)
            try await f.tokens.register(shared, for: f.alice.id)
            try await f.tokens.register(alices, for: f.alice.id)
            try await f.tokens.register(shared, for: f.bob.id)

            #expect(try await f.tokens.tokens(for: f.alice.id) == [alices])
            #expect(try await f.tokens.tokens(for: f.bob.id) == [shared])
            #expect(try await Self.owner(redis, shared.token) == f.bob.id.rawValue)
            #expect(try await Self.record(redis, f.alice.id, shared.token) == nil)

            // Pushes follow the owner.
            let store = NotificationStore(redis: redis)
            try await store.create(NotificationFixture.draft(1), for: f.alice.id)
            try await store.create(NotificationFixture.draft(2), for: f.bob.id)
            let jobs = try await NotificationFixture.stream(redis, RedisKeys.pushOutbox)
            #expect(jobs.map { "\($0.fields["user"] ?? "")/\($0.fields["token"] ?? "")" }
                == ["\(f.alice.id)/\(alices.token)", "\(f.bob.id)/\(shared.token)"])

            // And back: Bob loses it.
            try await f.tokens.register(shared, for: f.alice.id)
            #expect(try await f.tokens.tokens(for: f.bob.id).isEmpty)
            #expect(try await f.tokens.tokens(for: f.alice.id) == [shared, alices].sorted { $0.token < $1.token })
            #expect(try await Self.owner(redis, shared.token) == f.alice.id.rawValue)
        }
    }

    @Test("a token registered with an installation id moves only through a registration naming that installation")
    func boundToItsInstallation() async throws {
        try await withTestRedis { redis, _ in
            let f = try await Self.fixture(redis)
            let phone = try AppInstallation(id: "7d6c0f5e-2b1a-4c3d-9e8f-0a1b2c3d4e5f")
            let other = try AppInstallation(id: "attacker-installation-0001")
            let device = try Self.device(1)
            try await f.tokens.register(device, for: f.alice.id, installation: phone)
            #expect(try await redis.send(RedisCommand("GET", RedisKeys.pushTokenInstallation(device.token)), as: String?.self) == phone.digest)

            // Knowing the token is not enough: without the installation, or with another, Bob is
            // refused and Alice keeps her pushes.
            await expectRoomcastError(.conflict) { try await f.tokens.register(device, for: f.bob.id) }
            await expectRoomcastError(.conflict) { try await f.tokens.register(device, for: f.bob.id, installation: other) }
            #expect(try await f.tokens.tokens(for: f.alice.id) == [device])
            #expect(try await f.tokens.tokens(for: f.bob.id).isEmpty)
            #expect(try await Self.owner(redis, device.token) == f.alice.id.rawValue)
            // Alice refreshing it, with or without the id, keeps it hers and bound.
            try await f.tokens.register(device, for: f.alice.id)
            await expectRoomcastError(.conflict) { try await f.tokens.register(device, for: f.bob.id) }

            // The phone signs in to Bob's account: it names its installation, and the token moves.
            try await f.tokens.register(device, for: f.bob.id, installation: phone)
            #expect(try await f.tokens.tokens(for: f.alice.id).isEmpty)
            #expect(try await f.tokens.tokens(for: f.bob.id) == [device])
            await expectRoomcastError(.conflict) { try await f.tokens.register(device, for: f.alice.id, installation: other) }

            // Removed by its owner (sign-out): owner and binding go, so Redis keeps nothing of it.
            #expect(try await f.tokens.remove(device.token, for: f.bob.id))
            #expect(try await NotificationFixture.exists(redis, RedisKeys.pushTokenInstallation(device.token)) == false)
            #expect(try await NotificationFixture.exists(redis, RedisKeys.pushTokenOwner(device.token)) == false)
            try await f.tokens.register(device, for: f.alice.id, installation: other)
            #expect(try await f.tokens.tokens(for: f.alice.id) == [device])
        }
    }

    @Test("installation ids: 16-128 bytes of letters, digits, '-' and '_'; stored as their SHA-256")
    func installationIDs() throws {
        #expect(try AppInstallation(id: String(repeating: "a", count: 16)).digest.count == 64)
        #expect(try AppInstallation(id: String(repeating: "Z_-9", count: 32)).digest.utf8.allSatisfy { $0 != UInt8(ascii: "Z") })
        #expect(try AppInstallation(id: "abcdefghijklmnop") == AppInstallation(id: "abcdefghijklmnop"))
        #expect(try AppInstallation(id: "abcdefghijklmnop") != AppInstallation(id: "abcdefghijklmnoq"))
        for invalid in [String(repeating: "a", count: 15), String(repeating: "a", count: 129), "abcdefghijklmnop ", "abcdefghijklmnö1", ""] {
            #expect(throws: RoomcastError.self, "\(invalid)") { try AppInstallation(id: invalid) }
        }
    }

    @Test("a user keeps at most maxDevicesPerUser devices: one more drops the least recently registered, owner record too")
    func devicesPerUserAreBounded() async throws {
        try await withTestRedis { redis, _ in
            var f = try await Self.fixture(redis)
            f.tokens.maxDevicesPerUser = 3
            let devices = try (1...5).map(Self.device)
            for device in devices.prefix(3) {
                try await f.tokens.register(device, for: f.alice.id)
            }
            // The second becomes the least recently registered.
            _ = try await redis.send(RedisCommand("HSET", RedisKeys.userPushTokens(f.alice.id), devices[1].token, #"{"platform":"ios","updatedAt":1}"#))
            try await f.tokens.register(devices[3], for: f.alice.id)
            #expect(Set(try await f.tokens.tokens(for: f.alice.id)) == [devices[0], devices[2], devices[3]])
            #expect(try await Self.owner(redis, devices[1].token) == nil)
            try await f.tokens.register(devices[4], for: f.alice.id)
            #expect(try await f.tokens.tokens(for: f.alice.id).count == 3)
            #expect(try await redis.send(RedisCommand("HLEN", RedisKeys.userPushTokens(f.alice.id)), as: Int.self) == 3)
        }
    }

    @Test("remove: true then false; the owner record goes only with its owner's token")
    func remove() async throws {
        try await withTestRedis { redis, _ in
            let f = try await Self.fixture(redis)
            let shared = try Self.device(1)
            let kept = try Self.device(2)
            try await f.tokens.register(shared, for: f.alice.id)
            try await f.tokens.register(kept, for: f.alice.id)
            try await f.tokens.register(shared, for: f.bob.id)

            // Alice no longer has it: false, and Bob's ownership stays.
            #expect(try await f.tokens.remove(shared.token, for: f.alice.id) == false)
            #expect(try await Self.owner(redis, shared.token) == f.bob.id.rawValue)
            #expect(try await f.tokens.tokens(for: f.bob.id) == [shared])

            // Bob removes it, in upper case: gone, with its owner record.
            #expect(try await f.tokens.remove(shared.token.uppercased(), for: f.bob.id) == true)
            #expect(try await f.tokens.tokens(for: f.bob.id).isEmpty)
            #expect(try await Self.owner(redis, shared.token) == nil)
            #expect(try await f.tokens.remove(shared.token, for: f.bob.id) == false)

            #expect(try await f.tokens.tokens(for: f.alice.id) == [kept])
            #expect(try await f.tokens.remove(kept.token, for: f.alice.id) == true)
            #expect(try await f.tokens.tokens(for: f.alice.id).isEmpty)
            #expect(try await NotificationFixture.exists(redis, RedisKeys.userPushTokens(f.alice.id)) == false)
            #expect(try await Self.owner(redis, kept.token) == nil)
            #expect(try await f.tokens.remove(NotificationFixture.token(9), for: f.alice.id) == false)
        }
    }

    @Test("removeUnregistered: removed unless registered again after unregisteredAt; nil removes")
    func removeUnregistered() async throws {
        try await withTestRedis { redis, _ in
            let f = try await Self.fixture(redis)
            let device = try Self.device(1)
            try await f.tokens.register(device, for: f.alice.id)
            let updatedAt = Int64(try #require(try await Self.record(redis, f.alice.id, device.token)?["updatedAt"].intValue))

            // APNs saw it unregistered before the app registered it again: kept.
            #expect(try await f.tokens.removeUnregistered(device.token, for: f.alice.id, unregisteredAt: updatedAt - 1) == false)
            #expect(try await f.tokens.removeUnregistered(device.token, for: f.alice.id, unregisteredAt: updatedAt - 60_000) == false)
            #expect(try await f.tokens.tokens(for: f.alice.id) == [device])
            #expect(try await Self.owner(redis, device.token) == f.alice.id.rawValue)

            // Unregistered at (or after) the last registration: removed, owner record too.
            #expect(try await f.tokens.removeUnregistered(device.token, for: f.alice.id, unregisteredAt: updatedAt) == true)
            #expect(try await f.tokens.tokens(for: f.alice.id).isEmpty)
            #expect(try await Self.owner(redis, device.token) == nil)
            #expect(try await f.tokens.removeUnregistered(device.token, for: f.alice.id, unregisteredAt: updatedAt) == false)

            try await f.tokens.register(device, for: f.alice.id)
            let later = Int64(try #require(try await Self.record(redis, f.alice.id, device.token)?["updatedAt"].intValue))
            #expect(try await f.tokens.removeUnregistered(device.token, for: f.alice.id, unregisteredAt: later + 1_000) == true)
            #expect(try await f.tokens.tokens(for: f.alice.id).isEmpty)

            // No timestamp: removed whatever.
            try await f.tokens.register(device, for: f.alice.id)
            #expect(try await f.tokens.removeUnregistered(device.token, for: f.alice.id, unregisteredAt: nil) == true)
            #expect(try await f.tokens.tokens(for: f.alice.id).isEmpty)

            // A token that moved to Bob is not taken from him through Alice.
            try await f.tokens.register(device, for: f.alice.id)
            try await f.tokens.register(device, for: f.bob.id)
            #expect(try await f.tokens.removeUnregistered(device.token, for: f.alice.id, unregisteredAt: nil) == false)
            #expect(try await f.tokens.tokens(for: f.bob.id) == [device])
            #expect(try await Self.owner(redis, device.token) == f.bob.id.rawValue)
        }
    }

    @Test("removeUnregistered takes the token in any case, as remove does, and still honours a later registration")
    func removeUnregisteredUppercase() async throws {
        try await withTestRedis { redis, _ in
            let f = try await Self.fixture(redis)
            let device = try Self.device(1)
            try await f.tokens.register(device, for: f.alice.id)
            let updatedAt = Int64(try #require(try await Self.record(redis, f.alice.id, device.token)?["updatedAt"].intValue))
            // Re-registered after APNs' timestamp: kept, whichever case the token is given in.
            #expect(try await f.tokens.removeUnregistered(device.token.uppercased(), for: f.alice.id, unregisteredAt: updatedAt - 1) == false)
            #expect(try await f.tokens.tokens(for: f.alice.id) == [device])
        }
    }

    @Test("tokens(for:) lists each device once, sorted, for its user only")
    func listing() async throws {
        try await withTestRedis { redis, _ in
            let f = try await Self.fixture(redis)
            let devices = try (1...5).map(Self.device)
            for device in devices.reversed() {
                try await f.tokens.register(device, for: f.alice.id)
            }
            try await f.tokens.register(devices[0], for: f.alice.id)
            let bobs = try Self.device(7)
            try await f.tokens.register(bobs, for: f.bob.id)
            #expect(try await f.tokens.tokens(for: f.alice.id) == devices.sorted { $0.token < $1.token })
            #expect(try await f.tokens.tokens(for: f.bob.id) == [bobs])
            #expect(try await f.tokens.tokens(for: .random()).isEmpty)
        }
    }
}
