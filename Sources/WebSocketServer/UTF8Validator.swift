/// Checks UTF-8 as it arrives, fragment by fragment, so a connection fails as soon as its text
/// cannot be UTF-8 (RFC 6455 §8.1), not only once a fragmented message is whole.
///
/// Follows the well-formed byte sequences of Unicode 15 table 3-7: no overlong forms, no
/// surrogates, nothing above U+10FFFF.
struct UTF8Validator {
    /// Continuation bytes still expected for the current character.
    private var remaining = 0
    /// Bounds of the next byte, narrower than 80–BF right after E0, ED, F0 and F4.
    private var lower: UInt8 = 0x80
    private var upper: UInt8 = 0xBF

    /// Feeds the next bytes; false as soon as they cannot continue valid UTF-8.
    mutating func feed(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var index = bytes.startIndex
        while index < bytes.endIndex {
            // Runs of ASCII, the usual case for JSON, eight bytes at a time.
            if remaining == 0, bytes.endIndex - index >= 8,
                bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self) & 0x8080_8080_8080_8080 == 0
            {
                index += 8
                continue
            }
            guard step(bytes[index]) else { return false }
            index += 1
        }
        return true
    }

    /// True when no character is cut off: check it at the end of a message.
    var isAtCharacterBoundary: Bool { remaining == 0 }

    private mutating func step(_ byte: UInt8) -> Bool {
        guard remaining == 0 else {
            guard byte >= lower, byte <= upper else { return false }
            remaining -= 1
            (lower, upper) = (0x80, 0xBF)
            return true
        }
        switch byte {
        case 0x00...0x7F: return true
        case 0xC2...0xDF: remaining = 1
        case 0xE0: (remaining, lower) = (2, 0xA0)
        case 0xE1...0xEC, 0xEE...0xEF: remaining = 2
        case 0xED: (remaining, upper) = (2, 0x9F)
        case 0xF0: (remaining, lower) = (3, 0x90)
        case 0xF1...0xF3: remaining = 3
        case 0xF4: (remaining, upper) = (3, 0x8F)
        default: return false
        }
        return true
    }
}
