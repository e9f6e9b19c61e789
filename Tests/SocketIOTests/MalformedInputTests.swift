import NIOCore
import Testing

@testable import SocketIO

@Suite("Malformed Socket.IO packets")
struct MalformedInputTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var bytes: [UInt8]
        var error: SocketIOError
        var offset: Int?

        init(_ input: String, _ error: SocketIOError, at offset: Int? = nil) {
            self.bytes = Array(input.utf8)
            self.error = error
            self.offset = offset
        }

        init(bytes: [UInt8], _ error: SocketIOError, at offset: Int? = nil) {
            self.bytes = bytes
            self.error = error
            self.offset = offset
        }

        var testDescription: String {
            let shown = String(decoding: self.bytes.prefix(40), as: UTF8.self).debugDescription
            return "\(shown) -> \(self.error.code)"
        }
    }

    static let cases: [Case] = [
        // Packet type
        Case("", .emptyPacket),
        Case("9", .unknownPacketType, at: 0),
        Case("7[\"a\"]", .unknownPacketType, at: 0),
        Case("x", .unknownPacketType, at: 0),
        Case("[\"a\"]", .unknownPacketType, at: 0),
        Case("5", .invalidAttachments, at: 1),
        Case("5-[\"a\"]", .invalidAttachments, at: 1),
        Case("51[\"a\"]", .invalidAttachments, at: 2),
        Case("51234567-[\"a\"]", .invalidAttachments, at: 1),
        Case("5x-[\"a\"]", .invalidAttachments, at: 1),
        Case("51-{}", .invalidPayload),
        Case("61-[]", .invalidAckId),
        // Payload shape per kind
        Case("2", .invalidPayload),
        Case("2{}", .invalidPayload),
        Case("2[]", .invalidPayload),
        Case("2[1]", .invalidPayload, at: 2),
        Case("2[null]", .invalidPayload),
        Case("2[[\"a\"]]", .invalidPayload),
        Case("2\"a\"", .invalidPayload),
        Case("2[\"connect\"]", .reservedEventName, at: 2),
        Case("2[\"connect_error\",{}]", .reservedEventName),
        Case("2[\"disconnect\"]", .reservedEventName),
        Case("2[\"disconnecting\"]", .reservedEventName),
        Case("2[\"newListener\"]", .reservedEventName),
        Case("2[\"removeListener\",1]", .reservedEventName),
        Case("2[\"\\u0063onnect\"]", .reservedEventName),
        Case("0[]", .invalidPayload),
        Case("0\"str\"", .invalidPayload),
        Case("0null", .invalidPayload),
        Case("1{}", .invalidPayload),
        Case("1/admin,{}", .invalidPayload),
        Case("31{}", .invalidPayload),
        Case("35", .invalidPayload),
        Case("4", .invalidPayload),
        Case("4[]", .invalidPayload),
        Case("41", .invalidAckId),
        Case("2/nsp", .invalidPayload),
        // Ack ids
        Case("3{}", .invalidAckId),
        Case("3[]", .invalidAckId),
        Case("0/admin,5{}", .invalidAckId),
        Case("15", .invalidAckId, at: 1),
        Case("299999999999999999999[\"a\"]", .invalidAckId, at: 1),
        Case("29007199254740992[\"a\"]", .invalidAckId, at: 1),
        Case("2" + String(repeating: "0", count: 17) + "[\"a\"]", .invalidAckId),
        Case("2" + String(repeating: "9", count: 10_000), .invalidAckId),
        // Namespaces
        Case(bytes: Array("2/".utf8) + [0xFF] + Array(",[\"a\"]".utf8), .invalidNamespace, at: 1),
        // JSON syntax
        Case("2 12[\"x\",{}]", .malformedJSON, at: 4),
        Case("2[\"a\",]", .malformedJSON, at: 6),
        Case("2[\"a\"", .malformedJSON, at: 5),
        Case("2[\"a\"]x", .malformedJSON, at: 6),
        Case("2[\"a\"]]", .malformedJSON, at: 6),
        Case("2[\"a\"] [", .malformedJSON, at: 7),
        Case("2[nul]", .malformedJSON),
        Case("2[True]", .malformedJSON),
        Case("2[\"\\x\"]", .malformedJSON, at: 3),
        Case("2[\"\\u12\"]", .malformedJSON),
        Case("2[\"\\u12G4\"]", .malformedJSON),
        Case("2[\"\\ud800\"]", .malformedJSON),
        Case("2[\"\\ud800\\u0041\"]", .malformedJSON),
        Case("2[\"\\udc00\"]", .malformedJSON),
        Case("2[\"a\",01]", .malformedJSON),
        Case("2[\"a\",-]", .malformedJSON),
        Case("2[\"a\",1.]", .malformedJSON),
        Case("2[\"a\",.5]", .malformedJSON),
        Case("2[\"a\",1e]", .malformedJSON),
        Case("2[\"a\",+1]", .malformedJSON),
        Case("2[\"a\",NaN]", .malformedJSON),
        Case("2[\"a\",Infinity]", .malformedJSON),
        Case("2['a']", .malformedJSON),
        Case("2[\"a\" \"b\"]", .malformedJSON),
        Case("2[\"a\",{\"k\":1,}]", .malformedJSON),
        Case("2[\"a\",{\"k\" 1}]", .malformedJSON),
        Case("2[\"a\",{1:2}]", .malformedJSON),
        Case("2[\"a\",{\"k\"}]", .malformedJSON),
        Case("2 ", .malformedJSON),
        Case("2[\"a\"]\u{0}", .malformedJSON),
        Case("2/nsp,[\"a\"", .malformedJSON),
        Case("0{\"token\":\"x\"}x", .malformedJSON),
        Case("2[\"a\nb\"]", .malformedJSON, at: 4),
        Case("2[\"a\tb\"]", .malformedJSON),
        Case("2[\"a\u{1F}\"]", .malformedJSON),
        Case(bytes: Array("2[\"a".utf8) + [0xFF] + Array("\"]".utf8), .malformedJSON, at: 4),
        Case(bytes: Array("2[\"".utf8) + [0xC0, 0xAF] + Array("\"]".utf8), .malformedJSON),
        Case(bytes: Array("2[\"".utf8) + [0xED, 0xA0, 0x80] + Array("\"]".utf8), .malformedJSON),
        Case(bytes: Array("2[\"".utf8) + [0xF4, 0x90, 0x80, 0x80] + Array("\"]".utf8), .malformedJSON),
        Case(bytes: Array("2[\"".utf8) + [0xE2, 0x82] + Array("\"]".utf8), .malformedJSON),
        Case(bytes: Array("2[\"a\",".utf8) + [0xC3, 0xA9] + Array("]".utf8), .malformedJSON),
        // Depth
        Case("2" + String(repeating: "[", count: 65) + String(repeating: "]", count: 65), .payloadTooDeep, at: 65),
        Case("2[\"a\"," + String(repeating: "{\"k\":", count: 70), .payloadTooDeep),
        Case("2" + String(repeating: "[", count: 100_000), .payloadTooDeep),
    ]

    @Test(arguments: cases)
    func rejects(testCase: Case) throws {
        let error = try #require(throws: SocketIOError.self) {
            try SocketIOPacket(decoding: buffer(testCase.bytes))
        }
        #expect(error == testCase.error, "got \(error)")
        if let offset = testCase.offset {
            #expect(error.offset == offset, "got \(error)")
        }
        #expect(!error.message.isEmpty)
    }

    @Test func tableIsLargeEnough() {
        #expect(Self.cases.count >= 30)
    }

    @Test func codesAreStableSnakeCase() {
        let all: [(SocketIOError, String)] = [
            (.emptyPacket, "empty_packet"),
            (.unknownPacketType, "unknown_packet_type"),
            (.invalidNamespace, "invalid_namespace"),
            (.invalidAckId, "invalid_ack_id"),
            (.malformedJSON, "malformed_json"),
            (.invalidPayload, "invalid_payload"),
            (.reservedEventName, "reserved_event_name"),
            (.invalidAttachments, "invalid_attachments"),
            (.payloadTooDeep, "payload_too_deep"),
        ]
        for (error, code) in all {
            #expect(error.code == code)
            #expect(error.description.hasPrefix(code + ": "))
        }
        #expect(Set(all.map(\.0)).count == all.count)
    }

    @Test func messagesExplainTheProblem() throws {
        let error = try #require(throws: SocketIOError.self) { try SocketIOPacket(decoding: buffer("2[\"a\",]")) }
        #expect(error.message == "Malformed JSON: unexpected character at byte 6")
        let reserved = try #require(throws: SocketIOError.self) {
            try SocketIOPacket(decoding: buffer("2[\"connect\"]"))
        }
        #expect(reserved.message.contains("\"connect\""))
    }
}
