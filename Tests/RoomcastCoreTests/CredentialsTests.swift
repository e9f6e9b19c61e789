import RoomcastCore
import Testing

@Suite("Credentials")
struct CredentialsTests {
    @Test(
        "usernames: 3-32 of letters, digits, '_', '.', '-'",
        arguments: [
            ("abc", true), ("Alice_01", true), ("a.b-c_d", true), ("___", true), (String(repeating: "a", count: 32), true),
            ("ab", false), ("", false), (String(repeating: "a", count: 33), false), ("a b", false), ("al{ce", false),
            ("al}ce", false), ("al:ce", false), ("alice@x", false), ("jürgen", false), ("日本語名", false), ("abc🎉", false),
            ("abc\n", false), ("a/bc", false),
        ] as [(String, Bool)]
    )
    func usernames(_ username: String, valid: Bool) {
        do {
            try Credentials.validate(username: username)
            #expect(valid, "\(username.debugDescription) was accepted")
        } catch {
            #expect(!valid, "\(username.debugDescription) was rejected")
            #expect(error.code == .invalidPayload)
        }
    }

    @Test(
        "passwords: at least 8 characters, at most 128 bytes of UTF-8, any characters",
        arguments: [
            ("12345678", true), (String(repeating: "p", count: 128), true), ("pass word", true),
            (String(repeating: "🎉", count: 8), true), ("ünïcødé!", true), (String(repeating: "🎉", count: 32), true),
            ("", false), ("1234567", false), (String(repeating: "p", count: 129), false),
            // 33 characters, 132 bytes; 65 characters, 130 bytes: bounded in bytes, not characters.
            (String(repeating: "🎉", count: 33), false), (String(repeating: "é", count: 65), false),
        ] as [(String, Bool)]
    )
    func passwords(_ password: String, valid: Bool) {
        do {
            try Credentials.validate(password: password)
            #expect(valid, "\(password.debugDescription) was accepted")
        } catch {
            #expect(!valid, "\(password.debugDescription) was rejected")
            #expect(error.code == .invalidPayload)
        }
    }
}
