import Foundation

/// The rules for a room's optional name.
public enum RoomName {
    /// The longest name, in characters (grapheme clusters, as people count them).
    public static let maximumLength = 100
    /// The most bytes of UTF-8 a name may take: one character can be any number of bytes (a
    /// letter and thousands of combining marks), so characters alone bound nothing. 100 flags
    /// (8 bytes each) still fit.
    public static let maximumBytes = 800

    /// A name as stored: surrounding white space trimmed; `nil` when nothing is left (no name).
    /// - Throws: `invalid_payload` for a name longer than ``maximumLength`` once trimmed.
    public static func normalized(_ text: String?) throws(RoomcastError) -> String? {
        guard let text else { return nil }
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard trimmed.utf8.count <= maximumBytes, trimmed.count <= maximumLength else {
            throw RoomcastError(.invalidPayload, "name must be at most \(maximumLength) characters and \(maximumBytes) bytes of UTF-8")
        }
        return trimmed.isEmpty ? nil : trimmed
    }
}
