import NIOCore
import Testing

@testable import SocketIO

@Suite("Engine.IO packets")
struct EngineIOPacketTests {
    @Test(
        "decodes every packet type",
        arguments: [
            ("0{\"sid\":\"abc\"}", EngineIOPacket.open(buffer("{\"sid\":\"abc\"}"))),
            ("1", .close),
            ("2", .ping(nil)),
            ("2probe", .ping(buffer("probe"))),
            ("3", .pong(nil)),
            ("3probe", .pong(buffer("probe"))),
            ("4hello", .message(buffer("hello"))),
            ("4", .message(buffer(""))),
            ("42[\"a\"]", .message(buffer("2[\"a\"]"))),
            ("5", .upgrade),
            ("6", .noop),
            // The official suite's polling payload: bytes 1, 2, 3, 4 in base64.
            ("bAQIDBA==", .binary(ByteBuffer(bytes: [1, 2, 3, 4]))),
            ("b", .binary(ByteBuffer())),
        ]
    )
    func decodes(input: String, expected: EngineIOPacket) throws {
        #expect(try EngineIOPacket(decoding: buffer(input)) == expected)
    }

    @Test(
        "encodes every packet type",
        arguments: [
            (EngineIOPacket.open(buffer("{}")), "0{}"),
            (.close, "1"),
            (.ping(nil), "2"),
            (.ping(buffer("probe")), "2probe"),
            (.pong(nil), "3"),
            (.pong(buffer("probe")), "3probe"),
            (.message(buffer("2[\"x\"]")), "42[\"x\"]"),
            (.message(buffer("")), "4"),
            (.upgrade, "5"),
            (.noop, "6"),
        ]
    )
    func encodes(packet: EngineIOPacket, expected: String) throws {
        var out = ByteBuffer()
        packet.encode(into: &out)
        #expect(String(buffer: out) == expected)
        #expect(String(buffer: packet.encoded()) == expected)
        #expect(try EngineIOPacket(decoding: out) == packet)
    }

    @Test(
        "rejects malformed packets",
        arguments: [
            ("", EngineIOError.emptyPacket),
            ("7", .unknownPacketType),
            ("9hello", .unknownPacketType),
            ("x", .unknownPacketType),
            ("{}", .unknownPacketType),
            ("b!!!", .invalidBase64),
            ("bAQIDB", .invalidBase64),
            ("1x", .unexpectedData),
            ("5probe", .unexpectedData),
            ("6 ", .unexpectedData),
            ("0", .invalidHandshake),
            ("0[]", .invalidHandshake),
            ("0{\"sid\":", .invalidHandshake),
            ("0{} x", .invalidHandshake),
        ]
    )
    func rejects(input: String, expected: EngineIOError) {
        #expect(throws: expected) { try EngineIOPacket(decoding: buffer(input)) }
    }

    @Test func errorsCarryStableCodesAndMessages() throws {
        let error = try #require(throws: EngineIOError.self) { try EngineIOPacket(decoding: buffer("bAQ!")) }
        #expect(error.code == "invalid_base64")
        #expect(error.offset == 1)
        #expect(error.message.contains("base64"))
        #expect(error.description.hasPrefix("invalid_base64: "))
        #expect(EngineIOError.unknownPacketType.code == "unknown_packet_type")
        #expect(EngineIOError.emptyPacket.code == "empty_packet")
        #expect(EngineIOError.unexpectedData.code == "unexpected_data")
        #expect(EngineIOError.invalidHandshake.code == "invalid_handshake")
    }

    @Test func binaryEncodesAsBase64AndBack() throws {
        let packet = EngineIOPacket.binary(ByteBuffer(bytes: [1, 2, 3, 4]))
        #expect(String(buffer: packet.encoded()) == "bAQIDBA==")
        #expect(try EngineIOPacket(decoding: packet.encoded()) == packet)
        let payload = EngineIOPayload.encode([.message(buffer("hello")), packet])
        #expect(String(buffer: payload) == "4hello\u{1E}bAQIDBA==")
        #expect(try EngineIOPayload.decode(payload) == [.message(buffer("hello")), packet])
    }

    @Test func decodingReadsFromTheReaderIndex() throws {
        var framed = buffer("xx4hello")
        framed.moveReaderIndex(forwardBy: 2)
        #expect(try EngineIOPacket(decoding: framed) == .message(buffer("hello")))
    }

    @Test func handshakeEncodesTheOpenPacket() throws {
        let handshake = EngineIOHandshake(sid: "lv_VI97HAXpY6yYWAAAC")
        var out = ByteBuffer()
        handshake.encode(into: &out)
        let expected =
            #"0{"sid":"lv_VI97HAXpY6yYWAAAC","upgrades":[],"pingInterval":25000,"pingTimeout":20000,"maxPayload":1000000}"#
        #expect(String(buffer: out) == expected)
        #expect(String(buffer: handshake.packet.encoded()) == expected)
        #expect(try EngineIOPacket(decoding: out) == handshake.packet)
    }

    @Test func handshakeWithUpgradesAndEscapedSid() throws {
        let handshake = EngineIOHandshake(
            sid: "a\"b",
            upgrades: ["websocket", "webtransport"],
            pingInterval: 300,
            pingTimeout: 200,
            maxPayload: 1_000_000
        )
        var out = ByteBuffer()
        handshake.encode(into: &out)
        #expect(
            String(buffer: out)
                == #"0{"sid":"a\"b","upgrades":["websocket","webtransport"],"pingInterval":300,"pingTimeout":200,"maxPayload":1000000}"#
        )
        guard case .open(let json) = try EngineIOPacket(decoding: out) else {
            Issue.record("expected an open packet")
            return
        }
        #expect(String(buffer: json).hasPrefix("{\"sid\""))
    }
}
