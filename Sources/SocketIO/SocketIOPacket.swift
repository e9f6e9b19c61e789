public import NIOCore

/// A decoded Socket.IO v5 packet whose JSON stays as raw bytes for the application to decode once.
public struct SocketIOPacket: Hashable, Sendable {
    /// Nesting limit applied when no other is given.
    public static let defaultMaxDepth = 64

    /// The packet type.
    public let kind: SocketIOPacketKind
    /// The namespace, `/` when the packet names none.
    public let namespace: String
    /// The ack id: on an EVENT, the sender wants an ACK with this id; on an ACK, the id it answers.
    public let ackId: Int?
    /// The whole JSON data without surrounding whitespace, or nil when the packet has none.
    public let data: ByteBuffer?
    /// For EVENT packets, the decoded event name (the array's first element); otherwise nil.
    public let eventName: String?
    /// Raw JSON of each argument: EVENT elements after the name, or every ACK element; otherwise empty.
    public let arguments: [ByteBuffer]
    /// For BINARY_EVENT and BINARY_ACK (`kind` is `.event` or `.ack`), how many binary frames
    /// follow, the data's `{"_placeholder":true,"num":n}` objects standing for them; nil for a
    /// plain packet.
    public let attachments: Int?

    /// Decodes the body of an Engine.IO message packet (the text after the leading `4`).
    ///
    /// `data` and `arguments` are slices of `body`; nothing is copied.
    public init(decoding body: ByteBuffer, maxDepth: Int = SocketIOPacket.defaultMaxDepth) throws(SocketIOError) {
        let parsed = body.withUnsafeReadableBytes { bytes in
            Result { () throws(SocketIOError) in try SocketIOPacketParser.parse(bytes, maxDepth: maxDepth) }
        }
        let layout = try parsed.get()
        self.kind = layout.kind
        self.namespace = layout.namespace
        self.ackId = layout.ackId
        self.eventName = layout.eventName
        self.attachments = layout.attachments
        self.data = try layout.data.map { range throws(SocketIOError) in try Self.slice(body, range) }
        var arguments: [ByteBuffer] = []
        arguments.reserveCapacity(layout.arguments.count)
        for range in layout.arguments {
            arguments.append(try Self.slice(body, range))
        }
        self.arguments = arguments
    }

    private static func slice(_ body: ByteBuffer, _ range: Range<Int>) throws(SocketIOError) -> ByteBuffer {
        // The parser only reports ranges inside the body, so this cannot fail; it throws
        // rather than traps to keep that promise local.
        guard range.lowerBound >= 0,
            let slice = body.getSlice(at: body.readerIndex + range.lowerBound, length: range.count)
        else { throw SocketIOError.malformedJSON }
        return slice
    }
}
