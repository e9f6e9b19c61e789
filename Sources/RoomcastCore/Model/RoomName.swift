import Foundation

/// The rules for a room's optional name.
public enum RoomName {
    /// The longest name, in bytes of UTF-8 (a character can be any number of bytes).
    public static let maximumLength = 200

    /// A name as stored: surrounding white space trimmed; `nil` when nothing is left (no name).
    /// - Throws: `invalid_payload` for a name longer than ``maximumLength`` once trimmed.
    public static func normalized(_ text: String?) throws(RoomcastError) -> String? {
        guard let text else { return nil }
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard trimmed.utf8.count <= maximumLength else {
            throw RoomcastError(.invalidPayload, "name must be at most \(maximumLength) bytes of UTF-8")
        }
        return trimmed.isEmpty ? nil : trimmed
    }
}
