import Foundation
import NIOCore
import RedisClient
import RoomcastCore
import RoomcastTestSupport
import Testing

@Suite("User profiles against a real redis-server")
struct UserProfileTests {
    static func changes(_ json: String) throws -> ProfileChanges {
        try JSONDecoder().decode(ProfileChanges.self, from: Data(json.utf8))
    }

    @Test("fields are bounded in bytes, avatarUrl must be https and email an address")
    func validation() throws {
        // 50 two-byte characters fit 100 bytes; 51 do not, though they are 51 characters.
        try Self.changes(#"{"firstName":"\#(String(repeating: "é", count: 50))"}"#).validate()
        #expect(throws: RoomcastError.self) { try Self.changes(#"{"firstName":"\#(String(repeating: "é", count: 51))"}"#).validate() }
        #expect(throws: RoomcastError.self) { try Self.changes(#"{"lastName":"\#(String(repeating: "a", count: 101))"}"#).validate() }
        #expect(throws: RoomcastError.self) { try Self.changes(#"{"avatarUrl":"http://example.com/a.png"}"#).validate() }
        #expect(throws: RoomcastError.self) { try Self.changes(#"{"avatarUrl":"https:///nohost"}"#).validate() }
        #expect(throws: RoomcastError.self) { try Self.changes(#"{"avatarUrl":"https://e.com/\#(String(repeating: "é", count: 1100))"}"#).validate() }
        try Self.changes(#"{"avatarUrl":"https://cdn.example.com/a.png?s=64"}"#).validate()
        #expect(throws: RoomcastError.self) { try Self.changes(#"{"email":"not-an-address"}"#).validate() }
        #expect(throws: RoomcastError.self) { try Self.changes(#"{"email":"a b@example.com"}"#).validate() }
        try Self.changes(#"{"email":"Ann@Example.com"}"#).validate()
        // Absent keeps, null or "" clears.
        let parsed = try Self.changes(#"{"firstName":null,"lastName":"  ","email":"x@y.io"}"#)
        #expect(parsed.firstName == .clear && parsed.lastName == .clear && parsed.avatarUrl == .keep && parsed.email == .set("x@y.io"))
    }

    @Test("an account is created with its profile; the public user omits the email; update changes, clears and keeps fields")
    func createAndUpdate() async throws {
        try await withTestRedis { redis, _ in
            let store = UserStore(redis: redis)
            let account = try await store.createAccount(
                username: "ann", passwordHash: "h", displayName: nil,
                profile: try Self.changes(#"{"firstName":"Ann","email":"Ann@Example.com","avatarUrl":"https://e.com/a.png"}"#)
            )
            #expect(account.user.firstName == "Ann" && account.user.avatarUrl == "https://e.com/a.png" && account.email == "Ann@Example.com")
            #expect(try await redis.send(RedisCommand("GET", "email:{ann@example.com}"), as: String.self) == account.user.id.rawValue)
            #expect(try await store.account(account.user.id) == account)
            // The public JSON: every profile field, null when unset, and no email.
            let publicJSON = try JSONValue(String(buffer: try JSONCoding.encode(account.user)))
            #expect(publicJSON["firstName"] == "Ann" && publicJSON["lastName"] == .null && publicJSON["email"] == nil)
            let ownJSON = try JSONValue(String(buffer: try JSONCoding.encode(account)))
            #expect(ownJSON["email"] == "Ann@Example.com" && ownJSON["username"] == "ann")

            let updated = try await store.update(account.user.id, with: try Self.changes(#"{"lastName":"Lee","avatarUrl":null,"email":"ann@new.io"}"#))
            #expect(updated.user.firstName == "Ann" && updated.user.lastName == "Lee" && updated.user.avatarUrl == nil && updated.email == "ann@new.io")
            #expect(try await store.account(account.user.id) == updated)
            // The old address is free again, the new one taken.
            #expect(try await redis.send(RedisCommand("EXISTS", "email:{ann@example.com}")) == .integer(0))
            let fields = try await redis.send("HGETALL", RedisKeys.user(account.user.id)).fields
            #expect(fields["avatarUrl"] == nil && fields["email"] == "ann@new.io")
        }
    }

    @Test("an email belongs to one account, case-insensitively, at registration and on update")
    func emailUnique() async throws {
        try await withTestRedis { redis, _ in
            let store = UserStore(redis: redis)
            let ann = try await store.createAccount(username: "ann", passwordHash: "h", displayName: nil, profile: try Self.changes(#"{"email":"ann@e.io"}"#))
            let taken = await #expect(throws: RoomcastError.self) {
                try await store.createAccount(username: "bob", passwordHash: "h", displayName: nil, profile: try Self.changes(#"{"email":"ANN@e.io"}"#))
            }
            #expect(taken?.code == .conflict)
            #expect(try await store.credentials(username: "bob") == nil, "no account for the refused registration")
            let bob = try await store.createAccount(username: "bob", passwordHash: "h", displayName: nil)
            let clash = await #expect(throws: RoomcastError.self) { try await store.update(bob.user.id, with: try Self.changes(#"{"email":"Ann@E.io"}"#)) }
            #expect(clash?.code == .conflict)
            // A refused username gives back the email it claimed.
            _ = await #expect(throws: RoomcastError.self) {
                try await store.createAccount(username: "ANN", passwordHash: "h", displayName: nil, profile: try Self.changes(#"{"email":"carol@e.io"}"#))
            }
            _ = try await store.update(bob.user.id, with: try Self.changes(#"{"email":"carol@e.io"}"#))
            // Setting one's own address again is no conflict.
            _ = try await store.update(ann.user.id, with: try Self.changes(#"{"email":"ann@E.io"}"#))
        }
    }

    @Test("elements reference their creator: snapshots and hearts show the current profile, and the element hash holds no copy")
    func creatorByReference() async throws {
        try await withTestRedis { redis, _ in
            let f = try await ElementStoreTests.fixture(redis)
            let element = try await f.store.create(try ElementStoreTests.note(), by: f.alice, in: f.room)
            #expect(element.creator?.id == f.alice.id)
            let stored = try await redis.send("HGETALL", RedisKeys.element(element.id, in: f.room)).fields
            #expect(stored["creator"] == nil && stored["createdBy"] == f.alice.id.rawValue)
            _ = try await ReactionStore(redis: redis).toggle(on: element.id, by: f.alice, in: f.room)

            let users = UserStore(redis: redis)
            _ = try await users.update(f.alice.id, with: try Self.changes(#"{"firstName":"Alicia","avatarUrl":"https://e.com/alicia.png"}"#))
            let snapshot = try await f.store.snapshot(of: f.room, for: f.bob.id).elements
            let creator = try #require(snapshot.first?.creator)
            #expect(creator.firstName == "Alicia" && creator.avatarUrl == "https://e.com/alicia.png")
            #expect(snapshot.first?.reactions?.topReactors.first?.firstName == "Alicia")
        }
    }
}
