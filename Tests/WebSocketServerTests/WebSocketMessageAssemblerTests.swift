import NIOCore
import NIOWebSocket
@testable import WebSocketServer
import Testing

@Suite("WebSocketMessageAssembler: fragments to messages")
struct WebSocketMessageAssemblerTests {
    @Test("fragments are joined into one message; control of order is kept")
    func joins() throws {
        var assembler = WebSocketMessageAssembler(maxMessageSize: 100)
        #expect(try assembler.receive(.text, fin: false, data: ByteBuffer(string: "hel")) == nil)
        #expect(try assembler.receive(.continuation, fin: false, data: ByteBuffer(string: "lo ")) == nil)
        #expect(try assembler.receive(.continuation, fin: true, data: ByteBuffer(string: "wörld")) == .text(ByteBuffer(string: "hello wörld")))
        #expect(try assembler.receive(.binary, fin: true, data: ByteBuffer(bytes: [0xFF])) == .binary(ByteBuffer(bytes: [0xFF])))
    }

    @Test("out-of-order frames, a message too large and bad UTF-8 each fail with their code")
    func failures() {
        var assembler = WebSocketMessageAssembler(maxMessageSize: 8)
        #expect(throws: WebSocketCloseReason.protocolError("a continuation frame with no message to continue")) {
            try assembler.receive(.continuation, fin: true, data: ByteBuffer(string: "x"))
        }
        assembler = WebSocketMessageAssembler(maxMessageSize: 8)
        _ = try? assembler.receive(.text, fin: false, data: ByteBuffer(string: "a"))
        #expect(throws: WebSocketCloseReason.protocolError("a new message began before the previous one's final fragment")) {
            try assembler.receive(.text, fin: true, data: ByteBuffer(string: "b"))
        }
        assembler = WebSocketMessageAssembler(maxMessageSize: 8)
        _ = try? assembler.receive(.binary, fin: false, data: ByteBuffer(string: "12345"))
        #expect(throws: WebSocketCloseReason(.messageTooLarge, "message larger than 8 bytes")) {
            try assembler.receive(.continuation, fin: true, data: ByteBuffer(string: "6789"))
        }
        // Bad UTF-8 fails at the fragment that holds it, before the message is whole.
        assembler = WebSocketMessageAssembler(maxMessageSize: 8)
        #expect(throws: WebSocketCloseReason.invalidUTF8) {
            try assembler.receive(.text, fin: false, data: ByteBuffer(bytes: [0x61, 0xC0]))
        }
        // A character cut off by the final fragment.
        assembler = WebSocketMessageAssembler(maxMessageSize: 8)
        #expect(throws: WebSocketCloseReason.invalidUTF8) {
            try assembler.receive(.text, fin: true, data: ByteBuffer(bytes: [0x61, 0xE2, 0x82]))
        }
    }
}
