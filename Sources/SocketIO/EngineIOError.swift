/// An Engine.IO packet or polling payload could not be decoded; `code` and `message` are safe to send to clients.
///
/// Errors compare equal by kind alone, so `EngineIOError.invalidBase64` matches any
/// thrown base64 error whatever its offset or detail.
public struct EngineIOError: Error, Hashable, CustomStringConvertible, Sendable {
    private enum Kind: Hashable, Sendable {
        case emptyPacket
        case unknownPacketType
        case unexpectedData
        case invalidHandshake
        case invalidBase64
    }

    private let kind: Kind
    private let detail: String?
    /// Byte offset into the decoded text (frame or whole polling payload), when known.
    public let offset: Int?

    private init(_ kind: Kind, detail: String? = nil, offset: Int? = nil) {
        self.kind = kind
        self.detail = detail
        self.offset = offset
    }

    /// The packet, or a packet within a polling payload, is empty.
    public static var emptyPacket: Self { Self(.emptyPacket) }
    /// The first byte is not an Engine.IO packet type digit (0-6).
    public static var unknownPacketType: Self { Self(.unknownPacketType) }
    /// A close, upgrade or noop packet carries data, which the protocol never sends.
    public static var unexpectedData: Self { Self(.unexpectedData) }
    /// An open packet does not carry a JSON object.
    public static var invalidHandshake: Self { Self(.invalidHandshake) }
    /// A binary packet of a polling payload (`b` and base64) does not carry valid base64.
    public static var invalidBase64: Self { Self(.invalidBase64) }

    func at(_ offset: Int, _ detail: String? = nil) -> Self {
        Self(self.kind, detail: detail ?? self.detail, offset: offset)
    }

    /// Stable snake_case identifier, suitable for clients to branch on.
    public var code: String {
        switch self.kind {
        case .emptyPacket: "empty_packet"
        case .unknownPacketType: "unknown_packet_type"
        case .unexpectedData: "unexpected_data"
        case .invalidHandshake: "invalid_handshake"
        case .invalidBase64: "invalid_base64"
        }
    }

    /// Human-readable explanation, including the specific detail when known.
    public var message: String {
        let summary =
            switch self.kind {
            case .emptyPacket: "Empty Engine.IO packet"
            case .unknownPacketType: "Unknown Engine.IO packet type"
            case .unexpectedData: "Unexpected data in Engine.IO packet"
            case .invalidHandshake: "Engine.IO open packet must carry a JSON object"
            case .invalidBase64: "Binary Engine.IO packet is not valid base64"
            }
        guard let detail = self.detail else { return summary }
        return "\(summary): \(detail)"
    }

    /// `code: message`.
    public var description: String { "\(self.code): \(self.message)" }

    /// Compares the kind only; see the type's documentation.
    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.kind == rhs.kind }

    /// Hashes the kind only, consistently with `==`.
    public func hash(into hasher: inout Hasher) { hasher.combine(self.kind) }
}
