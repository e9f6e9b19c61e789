public import NIOCore

/// What a BINARY_EVENT (`5`) or BINARY_ACK (`6`) packet says about itself before its
/// attachments: this codec refuses such packets, and a server needs their header to refuse them
/// properly (through the ack the client asked for, then skipping the attachments that follow).
///
/// Wire form, as socket.io-parser writes it: `5<attachments>-[/namespace,][ackId][json]`.
public struct SocketIOBinaryHeader: Hashable, Sendable {
    /// The packet type: `.event` for BINARY_EVENT, `.ack` for BINARY_ACK.
    public let kind: SocketIOPacketKind
    /// How many binary frames follow the packet.
    public let attachments: Int
    /// The namespace, `/` when the packet names none.
    public let namespace: String
    /// The ack id the sender asked for (events) or answers (acks).
    public let ackId: Int?
    /// The event name, when the packet's data is an array starting with a string.
    public let eventName: String?

    /// The largest attachment count read: more is not a packet any client sends.
    static let maxAttachmentDigits = 6

    /// The header of a binary packet, or `nil` when `body` is not a well-formed one.
    public init?(decoding body: ByteBuffer) {
        let header = body.withUnsafeReadableBytes { bytes in
            try? SocketIOPacketParser.parseBinaryHeader(bytes)
        }
        guard let header else { return nil }
        self = header
    }

    init(kind: SocketIOPacketKind, attachments: Int, namespace: String, ackId: Int?, eventName: String?) {
        self.kind = kind
        self.attachments = attachments
        self.namespace = namespace
        self.ackId = ackId
        self.eventName = eventName
    }
}
