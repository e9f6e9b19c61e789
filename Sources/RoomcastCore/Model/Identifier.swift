import Foundation
import SocketIO

/// A typed identifier: a `UserID` cannot be passed where a `RoomID` is expected.
///
/// Identifiers go into Redis key names, so they are restricted to `[A-Za-z0-9_-]`, 1–64
/// characters: no `{` or `}` that would change a key's cluster hash tag, no `:` separators.
public struct Identifier<Kind>: Hashable, Sendable, Codable, CustomStringConvertible, Comparable {
    /// The identifier's text.
    public let rawValue: String

    /// Validates `text` as an identifier; `nil` when it has other characters or a bad length.
    public init?(_ text: String) {
        guard (1...64).contains(text.utf8.count), text.utf8.allSatisfy(Self.isAllowed) else { return nil }
        rawValue = text
    }

    /// A new random identifier (a lowercase UUID without dashes: 32 hex characters).
    public static func random() -> Self {
        // Written digit by digit: `uuidString`, lowercased and without its dashes, went through
        // NSString three times for every message and element.
        let text = withUnsafeBytes(of: UUID().uuid) { bytes in
            String(unsafeUninitializedCapacity: 2 * bytes.count) { digits in
                for (index, byte) in bytes.enumerated() {
                    digits[2 * index] = HexDigit.ascii(byte >> 4)
                    digits[2 * index + 1] = HexDigit.ascii(byte & 0x0f)
                }
                return 2 * bytes.count
            }
        }
        return Self(unchecked: text)
    }

    init(unchecked text: String) {
        rawValue = text
    }

    private static func isAllowed(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "_"), UInt8(ascii: "-"):
            return true
        default:
            return false
        }
    }

    public var description: String { rawValue }

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }

    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let identifier = Self(text) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "not a valid id: letters, digits, '_' or '-', 1-64 characters"))
        }
        self = identifier
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}

/// Marks user identifiers.
public enum UserKind {}
/// Marks room identifiers.
public enum RoomKind {}

/// Marks chat message identifiers.
public enum MessageKind {}

/// Marks client-chosen request identifiers (idempotent retries).
public enum RequestKind {}
/// A client-chosen id that makes a mutation safe to retry: the same id gets the same result.
public typealias RequestID = Identifier<RequestKind>

/// A user's id (the JWT `sub`).
public typealias UserID = Identifier<UserKind>
/// A room's id.
public typealias RoomID = Identifier<RoomKind>
/// A chat message's id.
public typealias MessageID = Identifier<MessageKind>
