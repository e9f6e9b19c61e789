/// ASCII hexadecimal digits, used by `\uXXXX` escapes in both directions (and by the
/// gateway's percent-decoding of query strings and its random identifiers).
public enum HexDigit {
    /// The digit's value; nil for any other byte.
    public static func value(of byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte &- UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte &- UInt8(ascii: "a") &+ 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte &- UInt8(ascii: "A") &+ 10
        default: nil
        }
    }

    /// Lowercase, matching what `JSON.stringify` emits for control characters.
    public static func ascii(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? UInt8(ascii: "0") &+ nibble : UInt8(ascii: "a") &+ (nibble &- 10)
    }
}
