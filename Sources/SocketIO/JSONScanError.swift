/// Why the JSON scanner rejected its input, and where.
struct JSONScanError: Error, Hashable, Sendable {
    enum Reason: Hashable, Sendable {
        case unexpectedEnd
        case unexpectedByte
        case invalidEscape
        case unpairedSurrogate
        case invalidUTF8
        case controlCharacter
        case invalidNumber
        case trailingData
        case tooDeep
    }

    var reason: Reason
    /// Index into the scanned buffer.
    var offset: Int

    init(_ reason: Reason, at offset: Int) {
        self.reason = reason
        self.offset = offset
    }

    var explanation: String {
        switch self.reason {
        case .unexpectedEnd: "unexpected end of input"
        case .unexpectedByte: "unexpected character"
        case .invalidEscape: "invalid escape sequence in string"
        case .unpairedSurrogate: "unpaired UTF-16 surrogate in \\u escape"
        case .invalidUTF8: "invalid UTF-8 in string"
        case .controlCharacter: "unescaped control character in string"
        case .invalidNumber: "invalid number"
        case .trailingData: "unexpected data after the JSON value"
        case .tooDeep: "nesting exceeds the maximum depth"
        }
    }
}
