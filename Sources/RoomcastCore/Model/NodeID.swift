/// A gateway node's id: 8 random lowercase base36 characters (`[a-z0-9]{8}`), made once when a
/// node starts.
///
/// Short because the node's Engine.IO session ids start with it, so any node can tell which node holds
/// a session; it goes into Redis key names (`node:{<id>}`), so it is validated when parsed.
public struct NodeID: Hashable, Sendable, Codable, CustomStringConvertible, Comparable {
    /// The id's text.
    public let rawValue: String

    /// The number of characters in an id.
    public static let length = 8

    /// Validates `text` as a node id; `nil` unless it is exactly 8 of `a-z` and `0-9`.
    public init?(_ text: some StringProtocol) {
        guard text.utf8.count == Self.length, text.utf8.allSatisfy(Self.isAllowed) else { return nil }
        rawValue = String(text)
    }

    /// A new random id (about 2.8 × 10¹² possible ids).
    public static func random() -> NodeID {
        var generator = SystemRandomNumberGenerator()
        return random(using: &generator)
    }

    /// A new random id from `generator`.
    public static func random(using generator: inout some RandomNumberGenerator) -> NodeID {
        let bytes = (0..<length).map { _ in alphabet[Int.random(in: 0..<alphabet.count, using: &generator)] }
        return NodeID(unchecked: String(decoding: bytes, as: UTF8.self))
    }

    private init(unchecked text: String) {
        rawValue = text
    }

    private static let alphabet = Array("0123456789abcdefghijklmnopqrstuvwxyz".utf8)

    private static func isAllowed(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"): return true
        default: return false
        }
    }

    public var description: String { rawValue }

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }

    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let id = Self(text) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "not a node id: 8 of a-z and 0-9"))
        }
        self = id
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}
