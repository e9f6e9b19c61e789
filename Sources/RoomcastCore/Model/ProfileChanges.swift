import Foundation

/// Changes to a user's profile, as `POST /api/auth/register` and `PUT /api/users/me` take them:
/// each field is left as it is (absent), cleared (`null`, `""` or white space only) or set.
///
/// Every field is bounded in bytes of UTF-8, not characters: a Redis hash field and every event
/// embedding the profile carry bytes.
public struct ProfileChanges: Sendable, Hashable, Decodable {
    /// What happens to one field.
    public enum Change: Sendable, Hashable {
        case keep
        case clear
        case set(String)
    }

    /// Longest `firstName` or `lastName`, in bytes.
    public static let maxNameBytes = 100
    /// Longest `email`, in bytes (RFC 5321's path limit).
    public static let maxEmailBytes = 254
    /// Longest `avatarUrl`, in bytes.
    public static let maxAvatarURLBytes = 2048

    /// `firstName`.
    public var firstName: Change = .keep
    /// `lastName`.
    public var lastName: Change = .keep
    /// `email`: unique over all accounts, case-insensitively.
    public var email: Change = .keep
    /// `avatarUrl`: an `https` URL.
    public var avatarUrl: Change = .keep

    /// No change.
    public init() {}

    private enum CodingKeys: String, CodingKey {
        case firstName, lastName, email, avatarUrl
    }

    /// Reads the four fields; other keys are left to the caller.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        func change(_ key: CodingKeys) throws -> Change {
            guard container.contains(key) else { return .keep }
            guard let text = try container.decodeIfPresent(String.self, forKey: key) else { return .clear }
            let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
            return trimmed.isEmpty ? .clear : .set(trimmed)
        }
        firstName = try change(.firstName)
        lastName = try change(.lastName)
        email = try change(.email)
        avatarUrl = try change(.avatarUrl)
    }

    /// Whether nothing changes.
    public var isEmpty: Bool { self == ProfileChanges() }

    /// Checks every field that is set.
    /// - Throws: `invalid_payload` naming the field.
    public func validate() throws(RoomcastError) {
        if case .set(let name) = firstName { try Self.checkName(name, field: "firstName") }
        if case .set(let name) = lastName { try Self.checkName(name, field: "lastName") }
        if case .set(let address) = email { try Self.checkEmail(address) }
        if case .set(let url) = avatarUrl { try Self.checkAvatarURL(url) }
    }

    /// The index form of an email (the key of `email:{...}`): lowercased.
    public static func emailKey(_ address: String) -> String { address.lowercased() }

    private static func checkName(_ name: String, field: String) throws(RoomcastError) {
        guard name.utf8.count <= maxNameBytes, !name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw RoomcastError(.invalidPayload, "\(field) must be at most \(maxNameBytes) bytes of UTF-8, without control characters")
        }
    }

    private static func checkEmail(_ address: String) throws(RoomcastError) {
        let parts = address.split(separator: "@", omittingEmptySubsequences: false)
        guard address.utf8.count <= maxEmailBytes, parts.count == 2, !parts[0].isEmpty, parts[1].contains("."),
            !parts[1].hasPrefix("."), !parts[1].hasSuffix("."),
            !address.unicodeScalars.contains(where: { $0.properties.isWhitespace || $0.properties.generalCategory == .control })
        else {
            throw RoomcastError(.invalidPayload, "email must be an address like name@example.com, at most \(maxEmailBytes) bytes")
        }
    }

    private static func checkAvatarURL(_ text: String) throws(RoomcastError) {
        guard text.utf8.count <= maxAvatarURLBytes, WebURL.isValid(text, httpsOnly: true) else {
            throw RoomcastError(.invalidPayload, "avatarUrl must be an https URL of at most \(maxAvatarURLBytes) bytes")
        }
    }
}
