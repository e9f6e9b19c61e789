import NIOCore
import SocketIO
import Testing

/// Headers of the binary packets socket.io-parser writes (`Encoder.encodeAsString`), which the
/// codec refuses but a server must read to refuse them through the ack they ask for.
@Suite("Socket.IO binary packet headers")
struct SocketIOBinaryHeaderTests {
    static func header(_ text: String) -> SocketIOBinaryHeader? {
        SocketIOBinaryHeader(decoding: ByteBuffer(string: text))
    }

    @Test("a BINARY_EVENT with an ack id, as socket.io-client sends emitWithAck(name, blob)")
    func eventWithAck() {
        let header = Self.header(#"51-0["element:create",{"_placeholder":true,"num":0}]"#)
        #expect(header?.kind == .event)
        #expect(header?.attachments == 1)
        #expect(header?.namespace == "/")
        #expect(header?.ackId == 0)
        #expect(header?.eventName == "element:create")
    }

    @Test("namespace, many attachments, no ack id; a BINARY_ACK")
    func namespaceAndAck() {
        let event = Self.header(#"52-/admin,["up",{"_placeholder":true,"num":0},{"_placeholder":true,"num":1}]"#)
        #expect(event?.attachments == 2)
        #expect(event?.namespace == "/admin")
        #expect(event?.ackId == nil)
        #expect(event?.eventName == "up")
        let ack = Self.header(#"61-12[{"_placeholder":true,"num":0}]"#)
        #expect(ack?.kind == .ack)
        #expect(ack?.ackId == 12)
        #expect(ack?.eventName == nil)
    }

    @Test("not a binary packet header", arguments: ["", "42[\"a\"]", "5", "5-[]", "51[]", "51234567-[]", "5x-[]"])
    func refused(_ text: String) {
        #expect(Self.header(text) == nil)
    }

    @Test("the packet itself is still refused by the codec")
    func codecRefuses() {
        #expect(throws: SocketIOError.binaryNotSupported) {
            try SocketIOPacket(decoding: ByteBuffer(string: #"51-0["a",{"_placeholder":true,"num":0}]"#))
        }
    }
}
