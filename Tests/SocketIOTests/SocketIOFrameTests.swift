import Foundation
import NIOCore
import Testing

@testable import SocketIO

@Suite("Socket.IO frame encoding")
struct SocketIOFrameTests {
    @Test func encodesExactFrames() {
        let payload = buffer(#"{"id":1,"text":"hi"}"#)
        #expect(
            String(buffer: SocketIOFrame.event(name: "message:new", payload: payload))
                == #"42["message:new",{"id":1,"text":"hi"}]"#
        )
        #expect(
            String(buffer: SocketIOFrame.event(name: "x", payload: payload, namespace: "/admin"))
                == #"42/admin,["x",{"id":1,"text":"hi"}]"#
        )
        #expect(
            String(buffer: SocketIOFrame.event(name: "x", payload: payload, namespace: "/admin", ackId: 7))
                == #"42/admin,7["x",{"id":1,"text":"hi"}]"#
        )
        #expect(
            String(buffer: SocketIOFrame.event(name: "x", payload: Array("[1]".utf8), ackId: 0)) == #"420["x",[1]]"#
        )
        #expect(String(buffer: SocketIOFrame.event(name: "x", payload: "null".utf8, namespace: "")) == #"42["x",null]"#)
        #expect(String(buffer: SocketIOFrame.event(name: "x", arguments: [])) == #"42["x"]"#)
        #expect(
            String(buffer: SocketIOFrame.event(name: "x", arguments: [buffer("1"), buffer("\"a\"")]))
                == #"42["x",1,"a"]"#
        )
        #expect(String(buffer: SocketIOFrame.ack(id: 12, payload: payload)) == #"4312[{"id":1,"text":"hi"}]"#)
        #expect(
            String(buffer: SocketIOFrame.ack(id: 3, payload: "true".utf8, namespace: "/admin")) == "43/admin,3[true]"
        )
        #expect(String(buffer: SocketIOFrame.ack(id: 4, arguments: [])) == "434[]")
        #expect(String(buffer: SocketIOFrame.ack(id: 4, arguments: [buffer("1"), buffer("2")])) == "434[1,2]")
        #expect(String(buffer: SocketIOFrame.connect(sid: "Kx9_a-1")) == #"40{"sid":"Kx9_a-1"}"#)
        #expect(String(buffer: SocketIOFrame.connect(sid: "s", namespace: "/admin")) == #"40/admin,{"sid":"s"}"#)
        #expect(
            String(buffer: SocketIOFrame.connectError(message: "Not authorized", code: "unauthorized"))
                == #"44{"message":"Not authorized","data":{"code":"unauthorized"}}"#
        )
        #expect(String(buffer: SocketIOFrame.connectError(message: "nope")) == #"44{"message":"nope"}"#)
        #expect(
            String(buffer: SocketIOFrame.connectError(message: "Invalid namespace", namespace: "/x"))
                == #"44/x,{"message":"Invalid namespace"}"#
        )
        #expect(String(buffer: SocketIOFrame.disconnect()) == "41")
        #expect(String(buffer: SocketIOFrame.disconnect(namespace: "/admin")) == "41/admin,")
    }

    /// Encodes through the frame builder, then decodes the way a server receives it.
    private func roundTrip(_ frame: ByteBuffer) throws -> SocketIOPacket {
        guard case .message(let body) = try EngineIOPacket(decoding: frame) else {
            throw RoundTripFailure()
        }
        return try SocketIOPacket(decoding: body)
    }

    struct RoundTripFailure: Error {}

    @Test(arguments: ["/", "/admin", "/ns-ü"])
    func roundTripsEveryKind(namespace: String) throws {
        let event = try self.roundTrip(
            SocketIOFrame.event(name: "e", payload: buffer("[1,{}]"), namespace: namespace, ackId: 99)
        )
        #expect(event.kind == .event)
        #expect(event.namespace == namespace)
        #expect(event.ackId == 99)
        #expect(event.eventName == "e")
        #expect(texts(event.arguments) == ["[1,{}]"])

        let ack = try self.roundTrip(
            SocketIOFrame.ack(id: 5, arguments: [buffer("\"ok\""), buffer("2")], namespace: namespace)
        )
        #expect(ack.kind == .ack)
        #expect(ack.namespace == namespace)
        #expect(ack.ackId == 5)
        #expect(texts(ack.arguments) == ["\"ok\"", "2"])

        let connect = try self.roundTrip(SocketIOFrame.connect(sid: "abc", namespace: namespace))
        #expect(connect.kind == .connect)
        #expect(connect.namespace == namespace)
        #expect(text(connect.data) == #"{"sid":"abc"}"#)

        let error = try self.roundTrip(SocketIOFrame.connectError(message: "m", code: "c", namespace: namespace))
        #expect(error.kind == .connectError)
        #expect(error.namespace == namespace)

        let disconnect = try self.roundTrip(SocketIOFrame.disconnect(namespace: namespace))
        #expect(disconnect.kind == .disconnect)
        #expect(disconnect.namespace == namespace)
        #expect(disconnect.data == nil)
    }

    static let awkwardStrings = [
        "plain",
        "",
        "quote\"inside",
        "back\\slash\\",
        "\\\"",
        "new\nline\r\n",
        "tab\tform\u{0C}back\u{08}",
        "nul\u{00}unit\u{1F}rs\u{1E}bell\u{07}del\u{7F}",
        "slash/and</script>",
        "accents éàü ñ",
        "CJK 你好 世界",
        "emoji 😀👍🏽👨‍👩‍👧‍👦🇫🇷",
        "line sep \u{2028} para sep \u{2029}",
        "bom \u{FEFF} private \u{E000} max \u{10FFFF}",
        "\u{1}\u{2}\u{3}\u{4}\u{5}\u{6}\u{0B}\u{0E}\u{0F}\u{10}\u{11}\u{12}\u{13}\u{14}\u{15}\u{16}\u{17}\u{18}\u{19}\u{1A}\u{1B}\u{1C}\u{1D}",
    ]

    @Test(arguments: awkwardStrings)
    func escapesAndRoundTripsEventNames(name: String) throws {
        let frame = SocketIOFrame.event(name: name, payload: buffer("{}"))
        let bytes = Array(frame.readableBytesView)
        #expect(!bytes.contains { $0 < 0x20 }, "control characters must be escaped")

        #expect(try self.roundTrip(frame).eventName == name)

        // Cross-check the escaper against an independent JSON parser.
        let json = Data(bytes.dropFirst(2))
        let parsed = try #require(try JSONSerialization.jsonObject(with: json) as? [Any])
        #expect(parsed.first as? String == name)
    }

    @Test(arguments: awkwardStrings)
    func escapesConnectErrorStrings(message: String) throws {
        let frame = SocketIOFrame.connectError(message: message, code: message)
        let json = Data(Array(frame.readableBytesView).dropFirst(2))
        let parsed = try #require(try JSONSerialization.jsonObject(with: json) as? [String: Any])
        #expect(parsed["message"] as? String == message)
        #expect((parsed["data"] as? [String: Any])?["code"] as? String == message)
        #expect(try self.roundTrip(frame).kind == .connectError)
    }

    @Test func usesShortEscapesAndLowercaseHex() {
        let frame = SocketIOFrame.event(name: "\"\\\n\r\t\u{08}\u{0C}\u{01}\u{1F}", arguments: [])
        #expect(String(buffer: frame) == #"42["\"\\\n\r\t\b\f\u0001\u001f"]"#)
    }
}
