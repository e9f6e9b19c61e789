public import NIOCore
public import NIOWebSocket

/// A server's WebSocket frame as the bytes that go on the wire (header and payload in one
/// buffer, unmasked), so one event is framed once and the same bytes go to every recipient.
public enum WebSocketFrameBytes {
    /// Frames `payload` as one final frame.
    /// - Parameters:
    ///   - opcode: `.text`, `.binary`, or a control opcode (whose payload must be ≤ 125 bytes).
    ///   - compressed: sets RSV1, which marks a permessage-deflate message (data frames only).
    public static func frame(_ opcode: WebSocketOpcode, _ payload: ByteBuffer, compressed: Bool = false, allocator: ByteBufferAllocator = .init()) -> ByteBuffer {
        let length = payload.readableBytes
        var bytes = allocator.buffer(capacity: length + 10)
        bytes.writeInteger(0x80 | (compressed ? 0x40 : 0) | UInt8(webSocketOpcode: opcode))
        switch length {
        case ...125:
            bytes.writeInteger(UInt8(length))
        case ...Int(UInt16.max):
            bytes.writeInteger(UInt8(126))
            bytes.writeInteger(UInt16(length))
        default:
            bytes.writeInteger(UInt8(127))
            bytes.writeInteger(UInt64(length))
        }
        bytes.writeImmutableBuffer(payload)
        return bytes
    }

    /// A close frame with its code and reason (cut to the 123 bytes a control frame allows).
    public static func close(_ reason: WebSocketCloseReason, allocator: ByteBufferAllocator = .init()) -> ByteBuffer {
        var payload = allocator.buffer(capacity: 125)
        payload.write(webSocketErrorCode: reason.code)
        var text = Substring(reason.reason)
        while text.utf8.count > 123 { text = text.dropLast() }
        payload.writeString(String(text))
        return frame(.connectionClose, payload, allocator: allocator)
    }
}
