import Foundation
public import NIOCore

/// One Engine.IO v4 text packet: a type digit followed by optional data.
public enum EngineIOPacket: Hashable, Sendable {
    /// `0`: the server's handshake, carrying the JSON object built by `EngineIOHandshake`.
    case open(ByteBuffer)
    /// `1`: the transport is being closed.
    case close
    /// `2`: heartbeat or upgrade probe (`2probe`), with the optional data echoed by the pong.
    case ping(ByteBuffer?)
    /// `3`: answer to a ping, echoing its data (`3probe`).
    case pong(ByteBuffer?)
    /// `4`: application data, for Socket.IO the text decoded by `SocketIOPacket`.
    case message(ByteBuffer)
    /// `5`: the client completes an upgrade to WebSocket.
    case upgrade
    /// `6`: no-op, used to release a pending polling request during an upgrade.
    case noop
    /// Binary application data: a WebSocket binary frame as it is, or in a polling payload `b`
    /// and the data in base64 (the reference's `encodePacket` without `supportsBinary`).
    case binary(ByteBuffer)

    /// Decodes one packet from a WebSocket text frame (or one record of a polling payload).
    ///
    /// Data buffers are slices of `text`; nothing is copied.
    public init(decoding text: ByteBuffer, maxDepth: Int = 64) throws(EngineIOError) {
        try self.init(decoding: text, baseOffset: 0, maxDepth: maxDepth)
    }

    init(decoding text: ByteBuffer, baseOffset: Int, maxDepth: Int) throws(EngineIOError) {
        guard let type = text.getInteger(at: text.readerIndex, as: UInt8.self) else {
            throw EngineIOError.emptyPacket.at(baseOffset)
        }
        var data = text
        data.moveReaderIndex(forwardBy: 1)
        let hasData = data.readableBytes > 0

        switch type {
        case UInt8(ascii: "0"):
            guard Self.isJSONObject(data, maxDepth: maxDepth) else {
                throw EngineIOError.invalidHandshake.at(baseOffset + 1)
            }
            self = .open(data)
        case UInt8(ascii: "1"), UInt8(ascii: "5"), UInt8(ascii: "6"):
            // The reference parser tolerates data here, but no conforming peer sends any;
            // rejecting it keeps a garbled frame from being mistaken for a control packet.
            guard !hasData else { throw EngineIOError.unexpectedData.at(baseOffset + 1) }
            self = type == UInt8(ascii: "1") ? .close : type == UInt8(ascii: "5") ? .upgrade : .noop
        case UInt8(ascii: "2"):
            self = .ping(hasData ? data : nil)
        case UInt8(ascii: "3"):
            self = .pong(hasData ? data : nil)
        case UInt8(ascii: "4"):
            self = .message(data)
        case UInt8(ascii: "b"):
            guard let bytes = Data(base64Encoded: Data(data.readableBytesView)) else {
                throw EngineIOError.invalidBase64.at(baseOffset + 1)
            }
            self = .binary(ByteBuffer(bytes: bytes))
        default:
            throw EngineIOError.unknownPacketType.at(baseOffset, "first byte is 0x\(String(type, radix: 16))")
        }
    }

    /// The packet type digit as written on the wire.
    public var typeDigit: UInt8 {
        switch self {
        case .open: UInt8(ascii: "0")
        case .close: UInt8(ascii: "1")
        case .ping: UInt8(ascii: "2")
        case .pong: UInt8(ascii: "3")
        case .message: UInt8(ascii: "4")
        case .upgrade: UInt8(ascii: "5")
        case .noop: UInt8(ascii: "6")
        case .binary: UInt8(ascii: "b")
        }
    }

    /// Appends the packet's text form (type digit then data; `b` and base64 for binary) to `buffer`.
    public func encode(into buffer: inout ByteBuffer) {
        buffer.writeInteger(self.typeDigit)
        switch self {
        case .open(let data), .message(let data), .ping(.some(let data)), .pong(.some(let data)):
            buffer.writeImmutableBuffer(data)
        case .binary(let data):
            buffer.writeString(Data(data.readableBytesView).base64EncodedString())
        case .close, .upgrade, .noop, .ping(.none), .pong(.none):
            break
        }
    }

    /// The packet's text form in a new buffer.
    public func encoded() -> ByteBuffer {
        var buffer = ByteBufferAllocator().buffer(capacity: 1 + self.dataLength)
        self.encode(into: &buffer)
        return buffer
    }

    var dataLength: Int {
        switch self {
        case .open(let data), .message(let data), .ping(.some(let data)), .pong(.some(let data)):
            data.readableBytes
        case .binary(let data):
            (data.readableBytes + 2) / 3 * 4
        case .close, .upgrade, .noop, .ping(.none), .pong(.none):
            0
        }
    }

    private static func isJSONObject(_ data: ByteBuffer, maxDepth: Int) -> Bool {
        data.withUnsafeReadableBytes { bytes in
            (try? JSONScanner.scan(bytes, maxDepth: maxDepth))?.kind == .object
        }
    }
}
