public import NIOCore

/// What travels on a pub/sub channel: the event's stream offset (or `-` when it has none), a
/// space, then the complete Socket.IO frame text.
///
/// Nodes forward the frame bytes to their sockets without decoding the JSON; the offset in front
/// lets a node know where it is in a room's stream without parsing anything.
public struct EventEnvelope: Sendable {
    /// The room stream offset, when the event has one.
    public var offset: Substring?
    /// The Engine.IO frame, ready to send as a WebSocket text frame.
    public var frame: ByteBuffer

    /// Splits a published payload; `nil` when it has no separator.
    public init?(payload: ByteBuffer) {
        guard let space = payload.readableBytesView.firstIndex(of: UInt8(ascii: " ")) else { return nil }
        let headLength = space - payload.readerIndex
        guard let head = payload.getString(at: payload.readerIndex, length: headLength),
            let frame = payload.getSlice(at: space + 1, length: payload.readableBytes - headLength - 1)
        else { return nil }
        self.offset = head == "-" ? nil : Substring(head)
        self.frame = frame
    }

    /// The payload to publish for a frame without an offset (per-user events).
    public static func payload(frame: ByteBuffer) -> ByteBuffer {
        var payload = ByteBuffer(string: "- ")
        payload.writeImmutableBuffer(frame)
        return payload
    }
}
