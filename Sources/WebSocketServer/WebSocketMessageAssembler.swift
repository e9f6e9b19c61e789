public import NIOCore
import NIOWebSocket

/// A complete WebSocket message, its fragments joined.
public enum WebSocketDataMessage: Equatable, Sendable {
    /// A text message, checked to be UTF-8.
    case text(ByteBuffer)
    case binary(ByteBuffer)
}

/// Joins data frames into messages (RFC 6455 §5.4), checking their order, the size of the
/// whole message and, as each fragment arrives, the UTF-8 of text.
struct WebSocketMessageAssembler {
    /// The largest message accepted, its fragments together (a frame alone is checked by
    /// `WebSocketFrameParser`).
    let maxMessageSize: Int
    /// The message whose final fragment has not come yet.
    private var partial: (isText: Bool, data: ByteBuffer)?
    private var utf8 = UTF8Validator()

    init(maxMessageSize: Int) {
        self.maxMessageSize = maxMessageSize
    }

    /// A message's first fragment came, and its final one has not.
    var isInMessage: Bool { partial != nil }

    /// Takes a text, binary or continuation frame (already unmasked).
    /// - Returns: the message when this frame completes one, else `nil`.
    /// - Throws: the close the connection must fail with: 1002 for frames out of order, 1009 for a
    ///   message too large, 1007 for text that is not UTF-8.
    mutating func receive(_ opcode: WebSocketOpcode, fin: Bool, data: ByteBuffer) throws(WebSocketCloseReason) -> WebSocketDataMessage? {
        switch opcode {
        case .text, .binary:
            guard partial == nil else {
                throw .protocolError("a new message began before the previous one's final fragment")
            }
            let isText = opcode == .text
            if isText {
                utf8 = UTF8Validator()
                try check(data, final: fin)
            }
            guard fin else {
                partial = (isText, data)
                return nil
            }
            return isText ? .text(data) : .binary(data)
        case .continuation:
            guard var message = partial else {
                throw .protocolError("a continuation frame with no message to continue")
            }
            partial = nil  // so the append below does not copy the buffer
            guard message.data.readableBytes + data.readableBytes <= maxMessageSize else {
                throw WebSocketCloseReason(.messageTooLarge, "message larger than \(maxMessageSize) bytes")
            }
            if message.isText { try check(data, final: fin) }
            var data = data
            message.data.writeBuffer(&data)
            guard fin else {
                partial = message
                return nil
            }
            return message.isText ? .text(message.data) : .binary(message.data)
        default:
            throw .protocolError("opcode \(opcode) is not a data frame")
        }
    }

    private mutating func check(_ data: ByteBuffer, final: Bool) throws(WebSocketCloseReason) {
        let valid = data.withUnsafeReadableBytes { utf8.feed($0) }
        guard valid, !final || utf8.isAtCharacterBoundary else { throw .invalidUTF8 }
    }
}
