/// Well-formed UTF-8 per Unicode Table 3-7: rejects overlong forms, encoded surrogates and
/// code points above U+10FFFF, all of which would otherwise reach the application.
enum UTF8Validation {
    /// Length of the well-formed multi-byte sequence starting at `index`, or nil.
    static func sequenceLength(_ bytes: UnsafeRawBufferPointer, at index: Int) -> Int? {
        guard index < bytes.count else { return nil }
        let lead = bytes[index]
        let length: Int
        let secondRange: ClosedRange<UInt8>
        switch lead {
        case 0x00...0x7F: return 1
        case 0xC2...0xDF: (length, secondRange) = (2, 0x80...0xBF)
        case 0xE0: (length, secondRange) = (3, 0xA0...0xBF)
        case 0xE1...0xEC, 0xEE...0xEF: (length, secondRange) = (3, 0x80...0xBF)
        case 0xED: (length, secondRange) = (3, 0x80...0x9F)
        case 0xF0: (length, secondRange) = (4, 0x90...0xBF)
        case 0xF1...0xF3: (length, secondRange) = (4, 0x80...0xBF)
        case 0xF4: (length, secondRange) = (4, 0x80...0x8F)
        default: return nil
        }
        guard bytes.count - index >= length, secondRange.contains(bytes[index + 1]) else { return nil }
        for offset in 2..<length where !(0x80...0xBF).contains(bytes[index + offset]) {
            return nil
        }
        return length
    }

    /// Whether every byte of `bytes` forms well-formed UTF-8.
    static func isValid(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var index = 0
        while index < bytes.count {
            guard let length = sequenceLength(bytes, at: index) else { return false }
            index += length
        }
        return true
    }
}
