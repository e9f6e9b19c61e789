import NIOCore
import Testing

@testable import SocketIO

@Suite("Socket.IO packet decoding")
struct SocketIOPacketTests {
    struct ConnectForm: Sendable, CustomTestStringConvertible {
        var input: String
        var namespace: String
        var data: String?
        var testDescription: String { self.input }
    }

    @Test(
        "decodes the CONNECT forms real clients send",
        arguments: [
            ConnectForm(input: "0", namespace: "/", data: nil),
            ConnectForm(input: "0{}", namespace: "/", data: "{}"),
            ConnectForm(input: #"0{"token":"x"}"#, namespace: "/", data: #"{"token":"x"}"#),
            ConnectForm(input: #"0/,{"token":"x"}"#, namespace: "/", data: #"{"token":"x"}"#),
            ConnectForm(input: "0/,", namespace: "/", data: nil),
            ConnectForm(
                input: #"0/admin,{"token":"x","n":[1,2]}"#,
                namespace: "/admin",
                data: #"{"token":"x","n":[1,2]}"#
            ),
            ConnectForm(input: "0/admin,", namespace: "/admin", data: nil),
            ConnectForm(input: "0/admin", namespace: "/admin", data: nil),
            ConnectForm(input: "0/chät,{}", namespace: "/chät", data: "{}"),
        ]
    )
    func decodesConnect(form: ConnectForm) throws {
        let packet = try SocketIOPacket(decoding: buffer(form.input))
        #expect(packet.kind == .connect)
        #expect(packet.namespace == form.namespace)
        #expect(text(packet.data) == form.data)
        #expect(packet.ackId == nil)
        #expect(packet.eventName == nil)
        #expect(packet.arguments.isEmpty)
    }

    @Test(arguments: ["1", "1/,", "1/admin,", "1/admin"])
    func decodesDisconnect(input: String) throws {
        let packet = try SocketIOPacket(decoding: buffer(input))
        #expect(packet.kind == .disconnect)
        #expect(packet.namespace == (input.contains("admin") ? "/admin" : "/"))
        #expect(packet.data == nil)
    }

    @Test func decodesAnEvent() throws {
        let packet = try SocketIOPacket(decoding: buffer(#"2["message:new",{"room":"r1","text":"hi"},42,null]"#))
        #expect(packet.kind == .event)
        #expect(packet.namespace == "/")
        #expect(packet.ackId == nil)
        #expect(packet.eventName == "message:new")
        #expect(texts(packet.arguments) == [#"{"room":"r1","text":"hi"}"#, "42", "null"])
        #expect(text(packet.data) == #"["message:new",{"room":"r1","text":"hi"},42,null]"#)
    }

    @Test func decodesAnEventWithoutArguments() throws {
        let packet = try SocketIOPacket(decoding: buffer(#"2["ping"]"#))
        #expect(packet.eventName == "ping")
        #expect(packet.arguments.isEmpty)
    }

    @Test func decodesAnEventWithAckIdAndNamespace() throws {
        let packet = try SocketIOPacket(decoding: buffer(#"2/admin,12["x",{}]"#))
        #expect(packet.kind == .event)
        #expect(packet.namespace == "/admin")
        #expect(packet.ackId == 12)
        #expect(packet.eventName == "x")
        #expect(texts(packet.arguments) == ["{}"])
    }

    @Test(
        "reads the ack id as the digits right after the type or namespace",
        arguments: [
            (#"212["x",{}]"#, 12),
            (#"20["x"]"#, 0),
            (#"2007["x"]"#, 7),
            (#"2/,5["x"]"#, 5),
            (#"29007199254740991["x"]"#, 9_007_199_254_740_991),
        ]
    )
    func decodesAckIds(input: String, ackId: Int) throws {
        #expect(try SocketIOPacket(decoding: buffer(input)).ackId == ackId)
    }

    @Test func aSpaceBeforeTheAckIdIsNotAnAckId() {
        #expect(throws: SocketIOError.malformedJSON) { try SocketIOPacket(decoding: buffer(#"2 12["x",{}]"#)) }
    }

    @Test func decodesAcks() throws {
        let empty = try SocketIOPacket(decoding: buffer("312[]"))
        #expect(empty.kind == .ack)
        #expect(empty.ackId == 12)
        #expect(empty.arguments.isEmpty)
        #expect(empty.eventName == nil)

        let full = try SocketIOPacket(decoding: buffer(#"3/admin,5["ok",{"n":1}]"#))
        #expect(full.namespace == "/admin")
        #expect(full.ackId == 5)
        #expect(texts(full.arguments) == [#""ok""#, #"{"n":1}"#])
    }

    @Test func decodesConnectErrors() throws {
        let object = try SocketIOPacket(decoding: buffer(#"4{"message":"Not authorized","data":{"code":"auth"}}"#))
        #expect(object.kind == .connectError)
        #expect(text(object.data) == #"{"message":"Not authorized","data":{"code":"auth"}}"#)

        let string = try SocketIOPacket(decoding: buffer(#"4/admin,"Invalid namespace""#))
        #expect(string.kind == .connectError)
        #expect(string.namespace == "/admin")
        #expect(text(string.data) == #""Invalid namespace""#)
    }

    @Test func toleratesJSONWhitespaceAndTrimsIt() throws {
        let packet = try SocketIOPacket(decoding: buffer("2 [ \"a\" ,\t1 ,\n{ } ]\r\n"))
        #expect(packet.eventName == "a")
        #expect(texts(packet.arguments) == ["1", "{ }"])
        #expect(text(packet.data) == "[ \"a\" ,\t1 ,\n{ } ]")
    }

    @Test func decodesEscapedEventNames() throws {
        let packet = try SocketIOPacket(decoding: buffer(#"2["q\"b\\s\/n\nt\té\u00e9\ud83d\ude00 😀"]"#))
        #expect(packet.eventName == "q\"b\\s/n\nt\téé😀 😀")
    }

    @Test func eventNamesAreCaseSensitiveAgainstTheReservedList() throws {
        #expect(try SocketIOPacket(decoding: buffer(#"2["Connect"]"#)).eventName == "Connect")
        #expect(try SocketIOPacket(decoding: buffer(#"2["connection"]"#)).eventName == "connection")
    }

    @Test func reservedNamesMayStillBeArgumentsOrAckData() throws {
        #expect(try SocketIOPacket(decoding: buffer(#"2["x","connect"]"#)).eventName == "x")
        #expect(try SocketIOPacket(decoding: buffer(#"31["connect"]"#)).arguments.count == 1)
    }

    @Test func respectsMaxDepth() throws {
        let atLimit = "2[\"x\"," + String(repeating: "[", count: 3) + String(repeating: "]", count: 3) + "]"
        #expect(try SocketIOPacket(decoding: buffer(atLimit), maxDepth: 4).arguments.count == 1)
        #expect(throws: SocketIOError.payloadTooDeep) { try SocketIOPacket(decoding: buffer(atLimit), maxDepth: 3) }
        #expect(throws: SocketIOError.payloadTooDeep) { try SocketIOPacket(decoding: buffer("0{}"), maxDepth: 0) }
        #expect(try SocketIOPacket(decoding: buffer("0"), maxDepth: 0).kind == .connect)
    }

    @Test func slicesRespectTheReaderIndex() throws {
        var body = buffer(#"junk2/a,1["e",[1]]"#)
        body.moveReaderIndex(forwardBy: 4)
        let packet = try SocketIOPacket(decoding: body)
        #expect(packet.namespace == "/a")
        #expect(packet.ackId == 1)
        #expect(texts(packet.arguments) == ["[1]"])
    }

    @Test func packetsAreValueComparable() throws {
        let a = try SocketIOPacket(decoding: buffer(#"2["x",1]"#))
        let b = try SocketIOPacket(decoding: buffer(#"2["x",1]"#))
        let c = try SocketIOPacket(decoding: buffer(#"2["x",2]"#))
        #expect(a == b)
        #expect(a != c)
        #expect(Set([a, b, c]).count == 2)
    }

    @Test func kindDigits() {
        #expect(SocketIOPacketKind.allCases.map { Character(UnicodeScalar($0.digit)) } == ["0", "1", "2", "3", "4"])
    }
}
