import NIOCore
import NIOWebSocket

/// A client's frame as it crosses the wire (RFC 6455 §5.2): masked with a random key unless told
/// otherwise, the length in the shortest of its three forms.
func clientFrameBytes(_ opcode: WebSocketOpcode, _ payload: [UInt8], fin: Bool = true, rsv1: Bool = false, masked: Bool = true) -> ByteBuffer {
    var bytes = ByteBuffer()
    bytes.writeInteger((fin ? 0x80 : 0) | (rsv1 ? 0x40 : 0) | UInt8(webSocketOpcode: opcode))
    let maskBit: UInt8 = masked ? 0x80 : 0
    switch payload.count {
    case ..<126:
        bytes.writeInteger(maskBit | UInt8(payload.count))
    case ..<65536:
        bytes.writeInteger(maskBit | 126)
        bytes.writeInteger(UInt16(payload.count))
    default:
        bytes.writeInteger(maskBit | 127)
        bytes.writeInteger(UInt64(payload.count))
    }
    guard masked else {
        bytes.writeBytes(payload)
        return bytes
    }
    let key = (0..<4).map { _ in UInt8.random(in: 0...255) }
    bytes.writeBytes(key)
    bytes.writeBytes(payload.enumerated().map { $0.element ^ key[$0.offset % 4] })
    return bytes
}
