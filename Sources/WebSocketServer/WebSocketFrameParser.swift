import NIOCore
import NIOWebSocket

/// A client's frames (RFC 6455 §5.2) from the bytes it sends, parsed inside
/// ``WebSocketConnectionHandler`` instead of by NIO's `ByteToMessageHandler` and
/// `WebSocketFrameDecoder`: that handler, its decoder, its two buffers and its pipeline context
/// were over half a kilobyte per idle connection, and a hop per frame.
///
/// A frame is taken once all its bytes are in; its payload is a slice of the bytes read, not a
/// copy. Only the bytes of a frame still incomplete are kept between reads, never more than one
/// header and `maxFrameSize`: a frame announcing more is refused as soon as its length is read.
struct WebSocketFrameParser {
    /// Why a client's bytes are not a frame this server takes.
    enum Failure: Error, Equatable {
        /// Longer than `maxFrameSize`.
        case frameTooLarge
        /// A control frame without FIN.
        case fragmentedControlFrame
        /// A control frame of more than 125 bytes.
        case longControlFrame
    }

    let maxFrameSize: Int
    /// The bytes read and not yet taken as frames; `nil` between frames, so an idle connection
    /// holds none.
    private var unparsed: ByteBuffer?
    /// Set by a refused frame: past it the bytes cannot be split into frames any more, so the
    /// parser takes no more.
    private var hasFailed = false

    init(maxFrameSize: Int) {
        self.maxFrameSize = maxFrameSize
    }

    /// Adds bytes as they were read.
    mutating func append(_ bytes: ByteBuffer) {
        guard bytes.readableBytes > 0, !hasFailed else { return }
        if unparsed == nil {
            unparsed = bytes
        } else {
            var bytes = bytes
            unparsed!.writeBuffer(&bytes)
        }
    }

    /// The next whole frame, or `nil` until more bytes come.
    /// - Throws: ``Failure`` for a frame the server refuses; after it the parser gives no frame
    ///   until ``reset()``.
    mutating func next() throws(Failure) -> WebSocketFrame? {
        guard var bytes = unparsed else { return nil }
        let found: Header?
        do {
            found = try header(of: bytes)
        } catch {
            hasFailed = true
            unparsed = nil
            throw error
        }
        guard let header = found, bytes.readableBytes >= header.size + header.length else { return nil }
        bytes.moveReaderIndex(forwardBy: header.size)
        let data = bytes.readSlice(length: header.length)!
        unparsed = bytes.readableBytes > 0 ? bytes : nil
        return WebSocketFrame(
            fin: header.first & 0x80 != 0, rsv1: header.first & 0x40 != 0, rsv2: header.first & 0x20 != 0, rsv3: header.first & 0x10 != 0,
            opcode: WebSocketOpcode(encodedWebSocketOpcode: header.first & 0x0F)!, maskKey: header.maskKey, data: data
        )
    }

    /// Bytes read and not yet taken as frames.
    var bufferedBytes: Int { unparsed?.readableBytes ?? 0 }

    /// Forgets what was read, and a refusal: once the connection no longer reads.
    mutating func reset() {
        unparsed = nil
        hasFailed = false
    }

    private struct Header {
        var first: UInt8
        var maskKey: WebSocketMaskingKey?
        /// Header bytes, masking key included.
        var size: Int
        /// Payload bytes.
        var length: Int
    }

    /// The header at the front of `bytes`, read without taking it; `nil` until it is all in.
    private func header(of bytes: ByteBuffer) throws(Failure) -> Header? {
        let start = bytes.readerIndex
        guard let first = bytes.getInteger(at: start, as: UInt8.self), let second = bytes.getInteger(at: start + 1, as: UInt8.self) else {
            return nil
        }
        var size = 2
        var length = Int(second & 0x7F)
        if length == 126 {
            guard let word = bytes.getInteger(at: start + 2, as: UInt16.self) else { return nil }
            length = Int(word)
            size = 4
        } else if length == 127 {
            guard let quad = bytes.getInteger(at: start + 2, as: UInt64.self) else { return nil }
            guard quad <= UInt64(maxFrameSize) else { throw .frameTooLarge }
            length = Int(quad)
            size = 10
        }
        guard length <= maxFrameSize else { throw .frameTooLarge }
        let isControl = first & 0x08 != 0
        if isControl && first & 0x80 == 0 { throw .fragmentedControlFrame }
        if isControl && length > 125 { throw .longControlFrame }
        var maskKey: WebSocketMaskingKey?
        if second & 0x80 != 0 {
            guard let key = bytes.viewBytes(at: start + size, length: 4) else { return nil }
            maskKey = WebSocketMaskingKey(key)
            size += 4
        }
        return Header(first: first, maskKey: maskKey, size: size, length: length)
    }
}
