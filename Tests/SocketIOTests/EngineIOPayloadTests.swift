import NIOCore
import Testing

@testable import SocketIO

@Suite("Engine.IO polling payloads")
struct EngineIOPayloadTests {
    @Test func decodesSeveralPackets() throws {
        let packets = try EngineIOPayload.decode(buffer("4hello\u{1E}2\u{1E}4world\u{1E}3probe\u{1E}6"))
        #expect(
            packets == [
                .message(buffer("hello")), .ping(nil), .message(buffer("world")), .pong(buffer("probe")), .noop,
            ]
        )
    }

    @Test func decodesASinglePacket() throws {
        #expect(try EngineIOPayload.decode(buffer("40")) == [.message(buffer("0"))])
    }

    @Test func encodesWithTheRecordSeparator() {
        let payload = EngineIOPayload.encode([.message(buffer("hello")), .ping(nil), .message(buffer("€€€"))])
        #expect(String(buffer: payload) == "4hello\u{1E}2\u{1E}4€€€")
        #expect(EngineIOPayload.encode([]).readableBytes == 0)
    }

    @Test func roundTripsSocketIOFrames() throws {
        let frames = [
            SocketIOFrame.connect(sid: "s1"),
            SocketIOFrame.event(name: "a\u{1E}b", payload: buffer("{\"x\":\"\\u001e\"}")),
            SocketIOFrame.ack(id: 3, arguments: []),
        ]
        let body = EngineIOPayload.join(frames: frames)
        #expect(String(buffer: body) == "40{\"sid\":\"s1\"}\u{1E}42[\"a\\u001eb\",{\"x\":\"\\u001e\"}]\u{1E}433[]")
        let packets = try EngineIOPayload.decode(body)
        #expect(packets.count == 3)
        guard case .message(let event) = packets[1] else {
            Issue.record("expected a message")
            return
        }
        #expect(try SocketIOPacket(decoding: event).eventName == "a\u{1E}b")
        #expect(EngineIOPayload.encode(packets) == body)
    }

    @Test(
        "rejects malformed payloads",
        arguments: [
            ("", EngineIOError.emptyPacket, 0),
            ("4a\u{1E}", .emptyPacket, 3),
            ("\u{1E}4a", .emptyPacket, 0),
            ("4a\u{1E}\u{1E}2", .emptyPacket, 3),
            ("4a\u{1E}b!!", .invalidBase64, 4),
            ("2\u{1E}9", .unknownPacketType, 2),
            ("2\u{1E}1close", .unexpectedData, 3),
        ]
    )
    func rejects(input: String, expected: EngineIOError, offset: Int) throws {
        let error = try #require(throws: EngineIOError.self) { try EngineIOPayload.decode(buffer(input)) }
        #expect(error == expected)
        #expect(error.offset == offset)
    }
}
