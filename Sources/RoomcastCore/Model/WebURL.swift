/// The rule for addresses clients load (element media, avatars): an absolute `http` or `https`
/// URL with a host, and no white space or control characters.
public enum WebURL {
    /// Whether `text` is such a URL.
    ///
    /// The scheme and the host's delimiters are read as bytes, not characters: a combining mark
    /// or emoji modifier after `//` joins the slash into one character, so a character-wise
    /// `hasPrefix("http://")` refused such a URL (schemathesis found it).
    /// - Parameter httpsOnly: refuse plain `http` too.
    public static func isValid(_ text: String, httpsOnly: Bool = false) -> Bool {
        let bytes = text.utf8
        let rest: Substring.UTF8View
        if hasScheme(bytes, "https://") {
            rest = text.utf8.dropFirst(8)
        } else if !httpsOnly, hasScheme(bytes, "http://") {
            rest = text.utf8.dropFirst(7)
        } else {
            return false
        }
        let host = rest.prefix { $0 != UInt8(ascii: "/") && $0 != UInt8(ascii: "?") && $0 != UInt8(ascii: "#") }
        guard let first = host.first, first != UInt8(ascii: "@"), first != UInt8(ascii: ":") else { return false }
        return !text.unicodeScalars.contains { $0.properties.isWhitespace || $0.value < 0x20 || $0.value == 0x7F }
    }

    /// Whether `bytes` start with `scheme` (lowercase ASCII), in any case.
    private static func hasScheme(_ bytes: String.UTF8View, _ scheme: StaticString) -> Bool {
        let expected = UnsafeBufferPointer(start: scheme.utf8Start, count: scheme.utf8CodeUnitCount)
        guard bytes.count >= expected.count else { return false }
        return zip(bytes, expected).allSatisfy { byte, lower in
            // ASCII letters differ from their capitals in 0x20 only.
            byte == lower || (lower >= UInt8(ascii: "a") && lower <= UInt8(ascii: "z") && byte == lower - 0x20)
        }
    }
}
