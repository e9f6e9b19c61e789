public import NIOCore
public import NIOWebSocket
import Synchronization

/// A data message for one or many connections, framed once, and compressed at most once per
/// deflate window size, by the first connection that needs that form.
///
/// The server compresses every message on its own (no context takeover,
/// ``PerMessageDeflate``), so a compressed frame is valid for every connection that negotiated
/// the same window: a fan-out to a thousand sockets compresses its event once (once per window
/// size the clients asked for; 15 unless a client limits it), and each socket's handler picks
/// the plain or the compressed bytes (``WebSocketConnectionHandler/write(_:)-(WebSocketOutboundMessage)``).
public final class WebSocketOutboundMessage: Sendable {
    public let opcode: WebSocketOpcode
    /// The uncompressed payload.
    public let payload: ByteBuffer
    /// The uncompressed frame, for connections without compression and for short messages.
    public let frame: ByteBuffer
    /// The frame for each window size (index: window bits − 9), once made: the compressed frame,
    /// or the plain one when compression did not make the message smaller.
    private let compressed = Mutex<[ByteBuffer?]>(Array(repeating: nil, count: 7))

    /// - Parameter opcode: `.text` or `.binary`.
    public init(_ opcode: WebSocketOpcode, _ payload: ByteBuffer) {
        self.opcode = opcode
        self.payload = payload
        self.frame = WebSocketFrameBytes.frame(opcode, payload)
    }

    /// The frame a connection with `deflate` negotiated (or none) is sent.
    func frame(for deflate: PerMessageDeflate?) -> ByteBuffer {
        guard let deflate, let bits = deflate.serverWindowBits, payload.readableBytes >= deflate.thresholdBytes else { return frame }
        // Under the lock: a connection on another loop that needs the same form waits for it
        // instead of compressing it a second time.
        return compressed.withLock { cache in
            if let made = cache[bits - 9] { return made }
            let made: ByteBuffer
            if let data = PerMessageDeflate.compress(payload, windowBits: bits), data.readableBytes < payload.readableBytes {
                made = WebSocketFrameBytes.frame(opcode, data, compressed: true)
            } else {
                made = frame
            }
            cache[bits - 9] = made
            return made
        }
    }
}
