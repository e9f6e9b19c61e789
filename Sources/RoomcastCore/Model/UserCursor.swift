import Foundation

/// A position in the index of every user (`users`, ordered by account creation, then id): the
/// last user of a page. The next page starts right after it, so a user registering meanwhile,
/// who sorts last, moves nothing and is met at the end.
///
/// Clients see it as `nextCursor`, `<createdAt>-<id>` (`^[0-9]{1,18}-[A-Za-z0-9_-]{1,64}$`), to
/// be passed back unchanged. Any such text is a position, so every cursor of that form is served
/// (the OpenAPI document's pattern is exact); the base64url form of `<createdAt>:<id>` that
/// earlier versions gave out is still read.
public struct UserCursor: Hashable, Sendable, CustomStringConvertible {
    /// The last user's `createdAt`, in epoch milliseconds (their score in the index).
    public var createdAt: Int64
    /// The last user's id (orders users created in the same millisecond).
    public var id: UserID

    /// Creates a cursor after the user `id` created at `createdAt`.
    public init(createdAt: Int64, id: UserID) {
        self.createdAt = createdAt
        self.id = id
    }

    /// Decodes the text a client got as `nextCursor`.
    /// - Throws: `invalid_payload` for anything that is no cursor.
    public init(encoded text: String) throws(RoomcastError) {
        let invalid = RoomcastError(.invalidPayload, "cursor is not `<createdAt>-<id>` as nextCursor gives it")
        guard text.utf8.count <= 128, text.utf8.allSatisfy(Self.isBase64URL) else { throw invalid }
        if let dash = text.firstIndex(of: "-"), (1...18).contains(text.distance(from: text.startIndex, to: dash)),
            text[..<dash].utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) })
        {
            // Digits only before the dash: never the base64url form, which starts with M, N or O.
            guard let createdAt = Int64(text[..<dash]), let id = UserID(String(text[text.index(after: dash)...])) else { throw invalid }
            self.init(createdAt: createdAt, id: id)
            return
        }
        guard let legacy = Self.base64URLDecoded(text) else { throw invalid }
        self = legacy
    }

    /// The form earlier versions gave out: base64url (no padding) of `<createdAt>:<id>`.
    private static func base64URLDecoded(_ text: String) -> UserCursor? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.utf8.count % 4) % 4)
        guard let data = Data(base64Encoded: base64), let plain = String(data: data, encoding: .utf8) else { return nil }
        let parts = plain.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, let createdAt = Int64(parts[0]), createdAt >= 0, let id = UserID(String(parts[1])) else { return nil }
        return UserCursor(createdAt: createdAt, id: id)
    }

    /// The text clients get: `<createdAt>-<id>`.
    public var encoded: String {
        "\(createdAt)-\(id)"
    }

    public var description: String { encoded }

    /// Whether the user created at `score` with id `other` comes after this position, in the
    /// index's order: by score, then by id bytes (as Redis orders equal scores).
    func precedes(score: Int64, id other: UserID) -> Bool {
        if createdAt != score { return createdAt < score }
        return id.rawValue.utf8.lexicographicallyPrecedes(other.rawValue.utf8)
    }

    private static func isBase64URL(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "-"), UInt8(ascii: "_"):
            return true
        default:
            return false
        }
    }
}
