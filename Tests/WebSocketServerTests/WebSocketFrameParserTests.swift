import NIOCore
import NIOWebSocket
import Testing

@testable import WebSocketServer

/// The client's frames from its bytes however they are split into reads, and the refusals that
/// keep what a connection buffers bounded.
@Suite("WebSocketFrameParser")
struct WebSocketFrameParserTests {
    /// A small frame, one with a 16-bit length, one with a 64-bit length, a ping and a fragment.
    static let frames: [(opcode: WebSocketOpcode, payload: [UInt8], fin: Bool)] = [
        (.text, Array("hello".utf8), true),
        (.binary, Array(repeating: 7, count: 300), true),
        (.text, Array(repeating: 0x61, count: 70_000), false),
        (.ping, [1, 2, 3], true),
        (.continuation, Array("!".utf8), true),
    ]

    static func wire() -> ByteBuffer {
        var bytes = ByteBuffer()
        for frame in frames {
            var encoded = clientFrameBytes(frame.opcode, frame.payload, fin: frame.fin)
            bytes.writeBuffer(&encoded)
        }
        return bytes
    }

    /// Feeds `bytes` in reads of `size` bytes and collects every frame.
    static func parse(_ bytes: ByteBuffer, readsOf size: Int) throws -> (frames: [WebSocketFrame], parser: WebSocketFrameParser) {
        var parser = WebSocketFrameParser(maxFrameSize: 100_000)
        var bytes = bytes
        var frames: [WebSocketFrame] = []
        while bytes.readableBytes > 0 {
            parser.append(bytes.readSlice(length: min(size, bytes.readableBytes))!)
            while let frame = try parser.next() { frames.append(frame) }
        }
        return (frames, parser)
    }

    @Test("frames come out whole and in order however the bytes are split; nothing is kept after the last", arguments: [1, 2, 7, 125, 4096, 1 << 20])
    func anySplit(readSize: Int) throws {
        let (frames, parser) = try Self.parse(Self.wire(), readsOf: readSize)
        #expect(frames.count == Self.frames.count)
        for (frame, expected) in zip(frames, Self.frames) {
            #expect(frame.opcode == expected.opcode)
            #expect(frame.fin == expected.fin)
            #expect(frame.maskKey != nil)
            #expect(Array(frame.unmaskedData.readableBytesView) == expected.payload)
        }
        #expect(parser.bufferedBytes == 0)
    }

    @Test("an unmasked frame and RSV1 are parsed as sent: refusing them is the handler's")
    func bitsAsSent() throws {
        var parser = WebSocketFrameParser(maxFrameSize: 64)
        parser.append(clientFrameBytes(.text, [0x61], rsv1: true, masked: false))
        let frame = try #require(try parser.next())
        #expect(frame.maskKey == nil && frame.rsv1 && Array(frame.data.readableBytesView) == [0x61])
    }

    @Test("a frame longer than the limit is refused from its header alone, in both length forms")
    func tooLarge() throws {
        for payload in [Array(repeating: UInt8(0), count: 65), Array(repeating: UInt8(0), count: 70_000)] {
            var parser = WebSocketFrameParser(maxFrameSize: 64)
            var bytes = clientFrameBytes(.binary, payload, masked: false)
            let headerLength = payload.count < 126 ? 2 : 10
            parser.append(bytes.readSlice(length: headerLength)!)
            #expect(throws: WebSocketFrameParser.Failure.frameTooLarge) { try parser.next() }
        }
    }

    @Test("control frames must be final and at most 125 bytes")
    func controlFrames() throws {
        var parser = WebSocketFrameParser(maxFrameSize: 1024)
        parser.append(clientFrameBytes(.ping, [1], fin: false))
        #expect(throws: WebSocketFrameParser.Failure.fragmentedControlFrame) { try parser.next() }
        parser.reset()
        parser.append(clientFrameBytes(.connectionClose, Array(repeating: 0, count: 126)))
        #expect(throws: WebSocketFrameParser.Failure.longControlFrame) { try parser.next() }
    }

    @Test("after a refused frame the parser takes nothing more until reset")
    func staysFailed() throws {
        var parser = WebSocketFrameParser(maxFrameSize: 64)
        parser.append(clientFrameBytes(.ping, [1], fin: false))
        #expect(throws: WebSocketFrameParser.Failure.fragmentedControlFrame) { try parser.next() }
        parser.append(clientFrameBytes(.text, [0x61]))
        #expect(try parser.next() == nil)
        #expect(parser.bufferedBytes == 0)
    }

    @Test("a partial frame is kept, and only it")
    func keepsOnlyThePartialFrame() throws {
        var parser = WebSocketFrameParser(maxFrameSize: 1024)
        var bytes = clientFrameBytes(.text, Array("one".utf8))
        var second = clientFrameBytes(.text, Array("two".utf8))
        bytes.writeBuffer(&second)
        parser.append(bytes.readSlice(length: bytes.readableBytes - 2)!)
        #expect(try parser.next().map { Array($0.unmaskedData.readableBytesView) } == Array("one".utf8))
        #expect(try parser.next() == nil)
        #expect(parser.bufferedBytes == 7)
        parser.append(bytes)
        #expect(try parser.next().map { Array($0.unmaskedData.readableBytesView) } == Array("two".utf8))
        #expect(parser.bufferedBytes == 0)
    }
}
