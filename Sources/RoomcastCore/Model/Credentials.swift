/// The rules for account names and passwords.
public enum Credentials {
    /// Allowed username lengths.
    public static let usernameLengths = 3...32
    /// Allowed password lengths.
    public static let passwordLengths = 8...128

    /// Checks a username: 3–32 characters of `[A-Za-z0-9_.-]` (they form a Redis key).
    public static func validate(username: String) throws(RoomcastError) {
        guard usernameLengths.contains(username.utf8.count),
            username.utf8.allSatisfy({ byte in
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                    UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "-"):
                    return true
                default:
                    return false
                }
            })
        else {
            throw RoomcastError(.invalidPayload, "username must be 3-32 letters, digits, '_', '.' or '-'")
        }
    }

    /// Checks a password's length: at least 8 characters, at most 128 bytes of UTF-8.
    public static func validate(password: String) throws(RoomcastError) {
        guard password.count >= passwordLengths.lowerBound, password.utf8.count <= passwordLengths.upperBound else {
            throw RoomcastError(.invalidPayload, "password must be at least 8 characters and at most 128 bytes")
        }
    }
}
