import NIOCore
import Testing

@testable import SocketIO

/// Feeds hostile input to every decoder; passing means no trap, hang or untyped error.
@Suite("Fuzz-style robustness")
struct DripTests {
    static let corpus: [String] = [
        "0", "0{}", #"0{"token":"x"}"#, #"0/,{"token":"x"}"#, #"0/admin,{"a":[1,2,{"b":null}]}"#, "1", "1/admin,",
        #"2["message:new",{"room":"r1","text":"h\u00e9\"llo","n":-1.5e3,"ok":true}]"#, #"2/admin,12["x",[],{}]"#,
        #"312["ok",{"id":7}]"#, #"4{"message":"nope","data":{"code":"x"}}"#, #"4"str""#, #"2["\ud83d\ude00 😀",null]"#,
    ]

    private static func decodeEverything(_ bytes: [UInt8]) -> (socketIO: Bool, engineIO: Bool) {
        let input = buffer(bytes)
        let decoded = try? SocketIOPacket(decoding: input)
        // Whatever was accepted must expose well-formed JSON slices.
        for slice in (decoded?.arguments ?? []) + (decoded?.data.map { [$0] } ?? []) {
            let valid = slice.withUnsafeReadableBytes { (try? JSONScanner.scan($0)) != nil }
            #expect(valid, "\(String(buffer: slice))")
        }
        let socketIO = decoded != nil
        _ = try? SocketIOPacket(decoding: input, maxDepth: 2)
        let engineIO = (try? EngineIOPacket(decoding: input)) != nil
        if let packets = try? EngineIOPayload.decode(input) {
            for case .message(let body) in packets {
                _ = try? SocketIOPacket(decoding: body)
            }
        }
        return (socketIO, engineIO)
    }

    @Test func everyTruncationOfValidPackets() throws {
        for packet in Self.corpus {
            let bytes = Array(packet.utf8)
            #expect(try SocketIOPacket(decoding: buffer(bytes)).namespace.hasPrefix("/"))
            for length in 0...bytes.count {
                _ = Self.decodeEverything(Array(bytes.prefix(length)))
                _ = Self.decodeEverything(Array(bytes.suffix(length)))
                _ = Self.decodeEverything([UInt8(ascii: "4")] + bytes.prefix(length))
            }
        }
    }

    @Test func randomMutationsOfValidPackets() {
        var generator = SeededGenerator(seed: 42)
        var successes = 0
        let interesting: [UInt8] =
            Array("[]{}\",:\\/0123456789-+.eEtfnu \u{1E}".utf8) + [0x00, 0x1F, 0x80, 0xBF, 0xC0, 0xED, 0xF4, 0xFF]
        for iteration in 0..<3000 {
            var bytes = Array(Self.corpus[iteration % Self.corpus.count].utf8)
            for _ in 0..<Int.random(in: 1...3, using: &generator) {
                let position = Int.random(in: 0...bytes.count, using: &generator)
                let byte = interesting.randomElement(using: &generator)!
                switch Int.random(in: 0..<3, using: &generator) {
                case 0 where position < bytes.count: bytes[position] = byte
                case 1 where position < bytes.count: bytes.remove(at: position)
                default: bytes.insert(byte, at: position)
                }
            }
            if Self.decodeEverything(bytes).socketIO { successes += 1 }
        }
        #expect(successes > 0)
    }

    @Test func randomBytes() {
        var generator = SeededGenerator(seed: 7)
        for _ in 0..<3000 {
            let length = Int.random(in: 0...48, using: &generator)
            var bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            // Give most cases a plausible header so the JSON path is exercised too.
            if !bytes.isEmpty && Bool.random(using: &generator) {
                bytes[0] = UInt8(ascii: "0") + UInt8.random(in: 0...6, using: &generator)
            }
            _ = Self.decodeEverything(bytes)
        }
    }

    @Test func decodedEventsReEncodeToEquivalentPackets() throws {
        for packet in Self.corpus {
            let decoded = try SocketIOPacket(decoding: buffer(packet))
            guard decoded.kind == .event, let name = decoded.eventName else { continue }
            let frame = SocketIOFrame.event(
                name: name,
                arguments: decoded.arguments,
                namespace: decoded.namespace,
                ackId: decoded.ackId
            )
            guard case .message(let body) = try EngineIOPacket(decoding: frame) else {
                Issue.record("not a message")
                continue
            }
            let again = try SocketIOPacket(decoding: body)
            #expect(again.eventName == decoded.eventName)
            #expect(again.arguments == decoded.arguments)
            #expect(again.namespace == decoded.namespace)
            #expect(again.ackId == decoded.ackId)
        }
    }
}
