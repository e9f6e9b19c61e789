/// The rule for addresses clients load (element media, avatars): an absolute `http` or `https`
/// URL with a host, and no white space or control characters.
public enum WebURL {
    /// Whether `text` is such a URL.
    /// - Parameter httpsOnly: refuse plain `http` too.
    public static func isValid(_ text: String, httpsOnly: Bool = false) -> Bool {
        let lowered = text.lowercased()
        let rest: Substring
        if lowered.hasPrefix("https://") {
            rest = text.dropFirst(8)
        } else if !httpsOnly, lowered.hasPrefix("http://") {
            rest = text.dropFirst(7)
        } else {
            return false
        }
        let host = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        guard !host.isEmpty, !host.hasPrefix("@"), !host.hasPrefix(":") else { return false }
        return !text.unicodeScalars.contains { $0.properties.isWhitespace || $0.value < 0x20 || $0.value == 0x7F }
    }
}
