@testable import RoomcastServer
import Testing

@Suite("PasswordHasher: bcrypt off the cooperative pool")
struct PasswordHasherTests {
    /// The lowest cost keeps the suite fast.
    let hasher = PasswordHasher(cost: 4)

    @Test("a hash verifies its password and no other")
    func roundTrip() async throws {
        let hash = try await hasher.hash("correct horse battery staple")
        #expect(hash.hasPrefix("$2b$04$"))
        #expect(hash.count == 60)
        #expect(try await hasher.verify("correct horse battery staple", against: hash))
        #expect(try await !hasher.verify("correct horse battery stapl", against: hash))
        #expect(try await !hasher.verify("", against: hash))
    }

    @Test("each hash has its own salt")
    func salted() async throws {
        let first = try await hasher.hash("password1")
        let second = try await hasher.hash("password1")
        #expect(first != second)
        #expect(try await hasher.verify("password1", against: second))
    }

    @Test("a hash made with another cost still verifies")
    func otherCost() async throws {
        let old = try await PasswordHasher(cost: 5).hash("p@ssw0rd!")
        #expect(old.hasPrefix("$2b$05$"))
        #expect(try await hasher.verify("p@ssw0rd!", against: old))
    }

    @Test("a malformed hash never matches", arguments: ["", "plain", "$2b$04$short", "$2b$99$abcdefghijklmnopqrstuuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"])
    func malformed(hash: String) async throws {
        #expect(try await !hasher.verify("plain", against: hash))
    }

    @Test("an unknown user (no hash) never matches, and costs a full bcrypt run")
    func unknownUser() async throws {
        let hasher = PasswordHasher(cost: 10)
        #expect(hasher.unknownUserHash.hasPrefix("$2b$10$"))
        #expect(hasher.unknownUserHash.count == 60)
        let clock = ContinuousClock()
        var matched = true
        let elapsed = try await clock.measure {
            matched = try await hasher.verify("anything", against: nil)
        }
        #expect(!matched)
        // 2^10 rounds take tens of milliseconds even on a fast machine, well over 2 ms; a hash
        // refused as malformed returns in microseconds.
        #expect(elapsed > .milliseconds(2))
        #expect(PasswordHasher(cost: 12).unknownUserHash.hasPrefix("$2b$12$"))
    }

    @Test("the cost must be within 4...31, naming auth.bcrypt_cost")
    func costBounds() {
        for cost in [4, 10, 31] {
            #expect(throws: Never.self) { try PasswordHasher.validate(cost: cost) }
        }
        for cost in [-1, 0, 3, 32, 100] {
            let error = #expect(throws: ConfigurationError.self) { try PasswordHasher.validate(cost: cost) }
            #expect(error?.key == "auth.bcrypt_cost")
        }
        #expect(PasswordHasher().cost == PasswordHasher.defaultCost)
    }
}
