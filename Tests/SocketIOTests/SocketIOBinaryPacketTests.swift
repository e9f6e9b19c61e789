import NIOCore
import SocketIO
import Testing

/// BINARY_EVENT and BINARY_ACK as socket.io-parser writes them (`Encoder.encodeAsString`): the
/// packet's text, with placeholders standing for the binary frames that follow it.
@Suite("Socket.IO binary packets")
struct SocketIOBinaryPacketTests {
    static func packet(_ text: String) throws -> SocketIOPacket {
        try SocketIOPacket(decoding: ByteBuffer(string: text))
    }

    @Test("a BINARY_EVENT with an ack id, as socket.io-client sends emitWithAck(name, blob)")
    func eventWithAck() throws {
        let packet = try Self.packet(#"51-0["element:create",{"_placeholder":true,"num":0}]"#)
        #expect(packet.kind == .event)
        #expect(packet.attachments == 1)
        #expect(packet.namespace == "/")
        #expect(packet.ackId == 0)
        #expect(packet.eventName == "element:create")
        #expect(packet.arguments.map { String(buffer: $0) } == [#"{"_placeholder":true,"num":0}"#])
    }

    @Test("namespace, many attachments, no ack id; a BINARY_ACK; a plain packet has none")
    func namespaceAndAck() throws {
        let event = try Self.packet(#"52-/admin,["up",{"_placeholder":true,"num":0},{"_placeholder":true,"num":1}]"#)
        #expect(event.attachments == 2)
        #expect(event.namespace == "/admin")
        #expect(event.ackId == nil)
        #expect(event.eventName == "up")
        let ack = try Self.packet(#"61-12[{"_placeholder":true,"num":0}]"#)
        #expect(ack.kind == .ack)
        #expect(ack.attachments == 1)
        #expect(ack.ackId == 12)
        #expect(try Self.packet(#"2["a"]"#).attachments == nil)
    }

    @Test("the official suite's echo: a BINARY_EVENT and a BINARY_ACK encode back to its bytes")
    func encodes() throws {
        let placeholders = [ByteBuffer(string: #"{"_placeholder":true,"num":0}"#), ByteBuffer(string: #"{"_placeholder":true,"num":1}"#)]
        let event = SocketIOFrame.event(name: "message-back", arguments: placeholders, attachments: 2)
        #expect(String(buffer: event) == #"452-["message-back",{"_placeholder":true,"num":0},{"_placeholder":true,"num":1}]"#)
        let ack = SocketIOFrame.ack(id: 789, arguments: placeholders, attachments: 2)
        #expect(String(buffer: ack) == #"462-789[{"_placeholder":true,"num":0},{"_placeholder":true,"num":1}]"#)
        let custom = SocketIOFrame.event(name: "x", arguments: [], namespace: "/custom", ackId: 3, attachments: 0)
        #expect(String(buffer: custom) == #"450-/custom,3["x"]"#)
    }
}
