import NIOCore
import NIOEmbedded
import NIOHTTP1
import NIOWebSocket
@testable import WebSocketServer
import Testing

private final class RecordingEndpoint: WebSocketEndpoint {
    var connection: WebSocketConnectionHandler?
    var messages: [WebSocketDataMessage] = []

    func opened(_ connection: WebSocketConnectionHandler) { self.connection = connection }
    func received(_ message: WebSocketDataMessage) { messages.append(message) }
    func shouldQuiesce() {}
    func closed() {}
}

@Suite("permessage-deflate: negotiation (RFC 7692 §7)")
struct PerMessageDeflateNegotiationTests {
    static let on = WebSocketCompression(isEnabled: true, thresholdBytes: 100)
    static let base = "permessage-deflate; server_no_context_takeover; client_no_context_takeover"

    private func negotiate(_ offers: String..., compression: WebSocketCompression = on) -> (response: String, PerMessageDeflate)? {
        var headers = HTTPHeaders()
        for offer in offers { headers.add(name: "Sec-WebSocket-Extensions", value: offer) }
        return PerMessageDeflate.negotiate(headers, compression: compression)
    }

    @Test("an offer without parameters is accepted, with no context takeover either way and a window of 15")
    func plainOffer() throws {
        let accepted = try #require(negotiate("permessage-deflate"))
        #expect(accepted.response == Self.base)
        #expect(accepted.1 == PerMessageDeflate(serverWindowBits: 15, thresholdBytes: 100))
    }

    @Test("what browsers, ws and aiohttp offer is accepted", arguments: [
        "permessage-deflate; client_max_window_bits",
        "permessage-deflate; client_max_window_bits=15",
        "permessage-deflate; server_no_context_takeover; client_no_context_takeover",
        "Permessage-Deflate; Client_Max_Window_Bits",
    ])
    func commonOffers(offer: String) throws {
        let accepted = try #require(negotiate(offer))
        #expect(accepted.response == Self.base)
        #expect(accepted.1.serverWindowBits == 15)
    }

    @Test("server_max_window_bits is honoured and echoed; 8 is accepted but sent uncompressed")
    func serverWindow() throws {
        let ten = try #require(negotiate("permessage-deflate; server_max_window_bits=10"))
        #expect(ten.response == Self.base + "; server_max_window_bits=10")
        #expect(ten.1.serverWindowBits == 10)
        let quoted = try #require(negotiate("permessage-deflate; server_max_window_bits=\"12\""))
        #expect(quoted.1.serverWindowBits == 12)
        let eight = try #require(negotiate("permessage-deflate; server_max_window_bits=8"))
        #expect(eight.response == Self.base + "; server_max_window_bits=8")
        #expect(eight.1.serverWindowBits == nil)
    }

    @Test("offers with unknown, duplicate or invalid parameters are declined", arguments: [
        "permessage-deflate; foo",
        "permessage-deflate; server_max_window_bits",
        "permessage-deflate; server_max_window_bits=16",
        "permessage-deflate; server_max_window_bits=7",
        "permessage-deflate; server_max_window_bits=010",
        "permessage-deflate; server_max_window_bits=1a",
        "permessage-deflate; client_max_window_bits=abc",
        "permessage-deflate; client_max_window_bits=20",
        "permessage-deflate; server_no_context_takeover=1",
        "permessage-deflate; client_no_context_takeover; client_no_context_takeover",
        "x-webkit-deflate-frame",
        "deflate-frame",
    ])
    func declined(offer: String) {
        #expect(negotiate(offer) == nil)
    }

    @Test("a declined offer gives way to the next acceptable one, over several header lines too")
    func fallback() throws {
        let inOneLine = try #require(negotiate("permessage-deflate; server_max_window_bits=16, permessage-deflate; server_max_window_bits=9"))
        #expect(inOneLine.1.serverWindowBits == 9)
        let inTwoLines = try #require(negotiate("x-webkit-deflate-frame", "permessage-deflate; bogus, permessage-deflate"))
        #expect(inTwoLines.response == Self.base)
    }

    @Test("nothing is negotiated when compression is off")
    func off() {
        #expect(negotiate("permessage-deflate", compression: .off) == nil)
    }

    @Test("the upgrade response carries the extension only when negotiated")
    func upgradeResponse() throws {
        var head = HTTPRequestHead(version: .http1_1, method: .GET, uri: "/")
        head.headers.add(name: "Sec-WebSocket-Key", value: "dGhlIHNhbXBsZSBub25jZQ==")
        head.headers.add(name: "Sec-WebSocket-Version", value: "13")
        let route: WebSocketRoute = { _ in { _ in RecordingEndpoint() } }
        let (plain, plainAccepted) = try #require(WebSocketUpgrader.accept(head, route: route, compression: Self.on, responseHeaders: [:]))
        #expect(plain["Sec-WebSocket-Extensions"].isEmpty && plainAccepted.deflate == nil)
        head.headers.add(name: "Sec-WebSocket-Extensions", value: "permessage-deflate; client_max_window_bits")
        let (headers, accepted) = try #require(WebSocketUpgrader.accept(head, route: route, compression: Self.on, responseHeaders: [:]))
        #expect(headers["Sec-WebSocket-Extensions"] == [Self.base])
        #expect(accepted.deflate?.serverWindowBits == 15)
        let (off, offAccepted) = try #require(WebSocketUpgrader.accept(head, route: route, compression: .off, responseHeaders: [:]))
        #expect(off["Sec-WebSocket-Extensions"].isEmpty && offAccepted.deflate == nil)
    }
}

@Suite("permessage-deflate: compressed messages on an embedded channel")
struct PerMessageDeflateHandlerTests {
    static let maxMessageSize = 1 << 20
    /// RFC 7692 §7.2.3.1: "Hello", compressed, its tail removed.
    static let helloCompressed: [UInt8] = [0xF2, 0x48, 0xCD, 0xC9, 0xC9, 0x07, 0x00]

    private let endpoint = RecordingEndpoint()
    private let channel = EmbeddedChannel()
    private let handler: WebSocketConnectionHandler

    init() throws {
        try channel.connect(to: .init(ipAddress: "127.0.0.1", port: 1)).wait()
        handler = WebSocketConnectionHandler(
            endpoint: endpoint, maxMessageSize: Self.maxMessageSize, maxQueuedBytes: 1 << 24,
            deflate: PerMessageDeflate(serverWindowBits: 15, thresholdBytes: 32)
        )
        try channel.pipeline.syncOperations.addHandler(handler)
    }

    private func clientFrame(_ opcode: WebSocketOpcode, _ bytes: [UInt8], fin: Bool = true, rsv1: Bool = false) -> ByteBuffer {
        clientFrameBytes(opcode, bytes, fin: fin, rsv1: rsv1)
    }

    /// The frames written: RSV1, opcode and payload.
    private func written() throws -> [(rsv1: Bool, opcode: WebSocketOpcode, payload: ByteBuffer)] {
        var frames: [(Bool, WebSocketOpcode, ByteBuffer)] = []
        while var bytes = try channel.readOutbound(as: ByteBuffer.self) {
            let first = bytes.readInteger(as: UInt8.self)!
            var length = Int(bytes.readInteger(as: UInt8.self)!)
            if length == 126 { length = Int(bytes.readInteger(as: UInt16.self)!) } else if length == 127 { length = Int(bytes.readInteger(as: UInt64.self)!) }
            frames.append((first & 0x40 != 0, WebSocketOpcode(encodedWebSocketOpcode: first & 0x0F)!, bytes.readSlice(length: length)!))
        }
        return frames
    }

    private func closeCode() throws -> UInt16? {
        guard var close = try written().last(where: { $0.opcode == .connectionClose })?.payload else { return nil }
        return close.readInteger(as: UInt16.self)
    }

    private func inflate(_ payload: ByteBuffer) throws -> String {
        let inflater = try #require(PerMessageInflater(maxMessageSize: Self.maxMessageSize))
        return String(buffer: try inflater.inflate(payload, final: true, allocator: .init()))
    }

    @Test("the RFC's compressed 'Hello' arrives as 'Hello', whole or in two fragments; no zlib stream is kept after it")
    func rfcExample() throws {
        try channel.writeInbound(clientFrame(.text, Self.helloCompressed, rsv1: true))
        #expect(handler.inflater == nil)
        try channel.writeInbound(clientFrame(.text, Array(Self.helloCompressed[..<3]), fin: false, rsv1: true))
        #expect(handler.inflater != nil)
        try channel.writeInbound(clientFrame(.continuation, Array(Self.helloCompressed[3...])))
        #expect(handler.inflater == nil)
        try channel.writeInbound(clientFrame(.text, Array("plain".utf8)))
        #expect(endpoint.messages == [.text(ByteBuffer(string: "Hello")), .text(ByteBuffer(string: "Hello")), .text(ByteBuffer(string: "plain"))])
    }

    @Test("a compressed message that inflates past the limit closes 1009 without growing to its size")
    func zipBomb() throws {
        // 64 MiB of zeros deflate to about 64 KiB.
        let bomb = try #require(PerMessageDeflate.compress(ByteBuffer(repeating: 0, count: 64 << 20), windowBits: 15))
        #expect(bomb.readableBytes < 100_000)
        try channel.writeInbound(clientFrame(.binary, Array(buffer: bomb), rsv1: true))
        #expect(endpoint.messages.isEmpty)
        #expect(try closeCode() == 1009)
        #expect(handler.inflater == nil)
    }

    @Test("data that is not deflate closes 1007")
    func invalidData() throws {
        try channel.writeInbound(clientFrame(.text, [0xFF, 0xFF, 0xFF, 0xFF, 0x00], rsv1: true))
        #expect(endpoint.messages.isEmpty)
        #expect(try closeCode() == 1007)
    }

    @Test("a compressed text message that is not UTF-8 once inflated closes 1007")
    func invalidUTF8() throws {
        let data = try #require(PerMessageDeflate.compress(ByteBuffer(bytes: [0x61, 0xC3, 0x28]), windowBits: 15))
        try channel.writeInbound(clientFrame(.text, Array(buffer: data), rsv1: true))
        #expect(try closeCode() == 1007)
    }

    @Test("RSV1 on a continuation or a control frame is a protocol error", arguments: [WebSocketOpcode.continuation, .ping])
    func rsv1Misplaced(opcode: WebSocketOpcode) throws {
        if opcode == .continuation { try channel.writeInbound(clientFrame(.text, Array(Self.helloCompressed[..<3]), fin: false, rsv1: true)) }
        try channel.writeInbound(clientFrame(opcode, [1], rsv1: true))
        #expect(try closeCode() == 1002)
    }

    @Test("RSV1 without the extension negotiated is still a protocol error")
    func rsv1NotNegotiated() throws {
        let plain = EmbeddedChannel()
        try plain.connect(to: .init(ipAddress: "127.0.0.1", port: 1)).wait()
        try plain.pipeline.syncOperations.addHandler(WebSocketConnectionHandler(endpoint: RecordingEndpoint(), maxMessageSize: 1024, maxQueuedBytes: 1024))
        try plain.writeInbound(clientFrame(.text, Self.helloCompressed, rsv1: true))
        var close = try #require(try plain.readOutbound(as: ByteBuffer.self))
        close.moveReaderIndex(forwardBy: 2)
        #expect(close.readInteger(as: UInt16.self) == 1002)
    }

    @Test("a message at or over the threshold goes out compressed (RSV1), a shorter one plain")
    func outbound() throws {
        let long = String(repeating: "42[\"chat\",{\"text\":\"hello\"}]", count: 10)
        handler.write(WebSocketOutboundMessage(.text, ByteBuffer(string: long)))
        handler.write(WebSocketOutboundMessage(.text, ByteBuffer(string: "3")))
        handler.flush()
        let frames = try written()
        #expect(frames.map(\.rsv1) == [true, false])
        #expect(frames[0].payload.readableBytes < long.utf8.count)
        #expect(try inflate(frames[0].payload) == long)
        #expect(String(buffer: frames[1].payload) == "3")
    }

    @Test("one message written to many connections is compressed once: the same bytes for every one")
    func compressedOnce() throws {
        let message = WebSocketOutboundMessage(.text, ByteBuffer(string: String(repeating: "fan-out ", count: 100)))
        let deflate = PerMessageDeflate(serverWindowBits: 15, thresholdBytes: 0)
        let first = message.frame(for: deflate)
        let second = message.frame(for: deflate)
        let address = { (buffer: ByteBuffer) in buffer.withUnsafeReadableBytes { UInt(bitPattern: $0.baseAddress) } }
        #expect(address(first) == address(second))
        #expect(first.getInteger(at: 0, as: UInt8.self)! & 0x40 != 0)
        // Another window is another form; no compression is the plain frame.
        #expect(address(message.frame(for: PerMessageDeflate(serverWindowBits: 9, thresholdBytes: 0))) != address(first))
        #expect(address(message.frame(for: nil)) == address(message.frame))
        #expect(address(message.frame(for: PerMessageDeflate(serverWindowBits: nil, thresholdBytes: 0))) == address(message.frame))
    }

    @Test("compressed with window sizes 9 to 15, messages inflate back", arguments: 9...15)
    func windows(bits: Int) throws {
        let text = (0..<2000).map { "event \($0 % 97) " }.joined()
        let data = try #require(PerMessageDeflate.compress(ByteBuffer(string: text), windowBits: bits))
        #expect(try inflate(data) == text)
        #expect(PerMessageDeflate.compress(ByteBuffer(string: "Hello"), windowBits: bits).map { Array(buffer: $0) } == Self.helloCompressed)
    }
}
