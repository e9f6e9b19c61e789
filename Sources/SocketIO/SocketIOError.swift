/// A Socket.IO packet could not be decoded; `code` and `message` are safe to send to clients.
///
/// Errors compare equal by kind alone, so `SocketIOError.malformedJSON` matches a thrown
/// malformed-JSON error whatever its offset or detail.
public struct SocketIOError: Error, Hashable, CustomStringConvertible, Sendable {
    private enum Kind: Hashable, Sendable {
        case emptyPacket
        case unknownPacketType
        case invalidNamespace
        case invalidAckId
        case malformedJSON
        case invalidPayload
        case reservedEventName
        case invalidAttachments
        case payloadTooDeep
    }

    private let kind: Kind
    private let detail: String?
    /// Byte offset into the decoded packet body where the problem was found, when known.
    public let offset: Int?

    private init(_ kind: Kind, detail: String? = nil, offset: Int? = nil) {
        self.kind = kind
        self.detail = detail
        self.offset = offset
    }

    /// The packet body is empty.
    public static var emptyPacket: Self { Self(.emptyPacket) }
    /// The first byte is not a Socket.IO packet type digit (0-6).
    public static var unknownPacketType: Self { Self(.unknownPacketType) }
    /// The namespace is not terminated by `,` or is not valid UTF-8.
    public static var invalidNamespace: Self { Self(.invalidNamespace) }
    /// The ack id is out of range, missing where required, or present where not allowed.
    public static var invalidAckId: Self { Self(.invalidAckId) }
    /// The data is not a single well-formed RFC 8259 JSON value.
    public static var malformedJSON: Self { Self(.malformedJSON) }
    /// The data is valid JSON but has the wrong shape for the packet type.
    public static var invalidPayload: Self { Self(.invalidPayload) }
    /// The event name is one that Socket.IO reserves for itself.
    public static var reservedEventName: Self { Self(.reservedEventName) }
    /// A BINARY_EVENT or BINARY_ACK packet does not start with a valid attachment count and `-`.
    public static var invalidAttachments: Self { Self(.invalidAttachments) }
    /// The data nests arrays and objects deeper than the decoder's `maxDepth`.
    public static var payloadTooDeep: Self { Self(.payloadTooDeep) }

    static func emptyPacket(_ detail: String) -> Self { Self(.emptyPacket, detail: detail) }
    static func unknownPacketType(_ detail: String, offset: Int) -> Self {
        Self(.unknownPacketType, detail: detail, offset: offset)
    }
    static func invalidNamespace(_ detail: String, offset: Int) -> Self {
        Self(.invalidNamespace, detail: detail, offset: offset)
    }
    static func invalidAckId(_ detail: String, offset: Int) -> Self {
        Self(.invalidAckId, detail: detail, offset: offset)
    }
    static func invalidPayload(_ detail: String, offset: Int) -> Self {
        Self(.invalidPayload, detail: detail, offset: offset)
    }
    static func reservedEventName(_ name: String, offset: Int) -> Self {
        Self(.reservedEventName, detail: "\"\(name)\" is a reserved event name", offset: offset)
    }
    static func invalidAttachments(_ detail: String, offset: Int) -> Self { Self(.invalidAttachments, detail: detail, offset: offset) }

    init(json error: JSONScanError) {
        if error.reason == .tooDeep {
            self.init(.payloadTooDeep, detail: error.explanation, offset: error.offset)
        } else {
            self.init(.malformedJSON, detail: "\(error.explanation) at byte \(error.offset)", offset: error.offset)
        }
    }

    /// Stable snake_case identifier, suitable for clients to branch on.
    public var code: String {
        switch self.kind {
        case .emptyPacket: "empty_packet"
        case .unknownPacketType: "unknown_packet_type"
        case .invalidNamespace: "invalid_namespace"
        case .invalidAckId: "invalid_ack_id"
        case .malformedJSON: "malformed_json"
        case .invalidPayload: "invalid_payload"
        case .reservedEventName: "reserved_event_name"
        case .invalidAttachments: "invalid_attachments"
        case .payloadTooDeep: "payload_too_deep"
        }
    }

    /// Human-readable explanation, including the specific detail when known.
    public var message: String {
        let summary =
            switch self.kind {
            case .emptyPacket: "Empty Socket.IO packet"
            case .unknownPacketType: "Unknown Socket.IO packet type"
            case .invalidNamespace: "Invalid namespace"
            case .invalidAckId: "Invalid ack id"
            case .malformedJSON: "Malformed JSON"
            case .invalidPayload: "Invalid payload for the packet type"
            case .reservedEventName: "Reserved event name"
            case .invalidAttachments: "Invalid binary attachment count"
            case .payloadTooDeep: "JSON payload is nested too deeply"
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
