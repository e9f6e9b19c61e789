import NIOCore
import NIOEmbedded
import NIOWebSocket
@testable import WebSocketServer
import Testing

/// Records what the handler hands to its endpoint.
private final class RecordingEndpoint: WebSocketEndpoint {
    var connection: WebSocketConnectionHandler?
    var messages: [WebSocketDataMessage] = []
    var quiesced = false
    var isClosed = false

    func opened(_ connection: WebSocketConnectionHandler) { self.connection = connection }
    func received(_ message: WebSocketDataMessage) { messages.append(message) }
    func shouldQuiesce() { quiesced = true }
    func closed() { isClosed = true }
}

@Suite("WebSocketConnectionHandler: RFC 6455 on an embedded channel")
struct WebSocketConnectionHandlerTests {
    /// The budget of three `4x` text frames (4 bytes each on the wire) held for a slow client.
    static let threeSmallFrames = 3 * (4 + OutboundBudget.perFrameBytes)

    private let endpoint = RecordingEndpoint()
    private let channel = EmbeddedChannel()

    init() throws {
        try channel.connect(to: .init(ipAddress: "127.0.0.1", port: 1)).wait()
        try channel.pipeline.syncOperations.addHandler(
            WebSocketConnectionHandler(endpoint: endpoint, maxMessageSize: 64, maxQueuedBytes: Self.threeSmallFrames)
        )
    }

    private func clientFrame(_ opcode: WebSocketOpcode, _ bytes: [UInt8], fin: Bool = true, masked: Bool = true, rsv1: Bool = false) -> ByteBuffer {
        clientFrameBytes(opcode, bytes, fin: fin, rsv1: rsv1, masked: masked)
    }

    private func closePayload(_ code: UInt16, _ reason: String = "") -> [UInt8] {
        [UInt8(code >> 8), UInt8(code & 0xFF)] + Array(reason.utf8)
    }

    /// The frames written, decoded (server frames are unmasked).
    private func written() throws -> [(opcode: WebSocketOpcode, payload: [UInt8])] {
        var frames: [(WebSocketOpcode, [UInt8])] = []
        while var bytes = try channel.readOutbound(as: ByteBuffer.self) {
            let first = bytes.readInteger(as: UInt8.self)!
            var length = Int(bytes.readInteger(as: UInt8.self)!)
            if length == 126 { length = Int(bytes.readInteger(as: UInt16.self)!) }
            frames.append((WebSocketOpcode(encodedWebSocketOpcode: first & 0x0F)!, bytes.readBytes(length: length)!))
        }
        return frames
    }

    @Test("masked messages reach the endpoint; frames written go out when flushed")
    func messagesAndWrites() throws {
        try channel.writeInbound(clientFrame(.text, Array("4hi".utf8), fin: false))
        try channel.writeInbound(clientFrame(.continuation, Array("!".utf8)))
        #expect(endpoint.messages == [.text(ByteBuffer(string: "4hi!"))])
        endpoint.connection!.write(WebSocketFrameBytes.frame(.text, ByteBuffer(string: "42[]")))
        #expect(try written().isEmpty)
        endpoint.connection!.flush()
        let frames = try written()
        #expect(frames.map(\.opcode) == [.text] && frames.first?.payload == Array("42[]".utf8))
    }

    @Test("a ping is answered with a pong carrying its payload")
    func ping() throws {
        try channel.writeInbound(clientFrame(.ping, [1, 2, 3]))
        let frames = try written()
        #expect(frames.count == 1 && frames[0].opcode == .pong && frames[0].payload == [1, 2, 3])
    }

    @Test("a client's close is echoed with its code, then the connection ends")
    func closeEcho() throws {
        try channel.writeInbound(clientFrame(.connectionClose, closePayload(4000, "bye")))
        let frames = try written()
        #expect(frames.count == 1 && frames[0].opcode == .connectionClose && frames[0].payload == closePayload(4000))
        #expect(!channel.isActive)
        #expect(endpoint.isClosed)
    }

    @Test("protocol violations close with 1002", arguments: [
        "unmasked", "rsv1", "reserved opcode", "close code 1005", "close code 2999", "one-byte close", "close reason not UTF-8",
    ])
    func violations(kind: String) throws {
        let frame: ByteBuffer
        switch kind {
        case "unmasked": frame = clientFrame(.text, [0x61], masked: false)
        case "rsv1": frame = clientFrame(.text, [0x61], rsv1: true)
        case "reserved opcode": frame = clientFrame(WebSocketOpcode(encodedWebSocketOpcode: 0x3)!, [])
        case "close code 1005": frame = clientFrame(.connectionClose, closePayload(1005))
        case "close code 2999": frame = clientFrame(.connectionClose, closePayload(2999))
        case "one-byte close": frame = clientFrame(.connectionClose, [0x03])
        default: frame = clientFrame(.connectionClose, closePayload(1000) + [0xC0])
        }
        try channel.writeInbound(frame)
        let frames = try written()
        #expect(frames.count == 1 && frames[0].opcode == .connectionClose && Array(frames[0].payload.prefix(2)) == closePayload(1002))
        #expect(!channel.isActive)
        #expect(endpoint.messages.isEmpty)
    }

    @Test("bad UTF-8 closes with 1007; a frame too large for the decoder with 1009")
    func dataErrors() throws {
        try channel.writeInbound(clientFrame(.text, [0x61, 0xFF]))
        #expect(try written().first.map { Array($0.payload.prefix(2)) } == closePayload(1007))

        let other = EmbeddedChannel()
        let endpoint = RecordingEndpoint()
        try other.connect(to: .init(ipAddress: "127.0.0.1", port: 1)).wait()
        try other.pipeline.syncOperations.addHandler(WebSocketConnectionHandler(endpoint: endpoint, maxMessageSize: 64, maxQueuedBytes: Self.threeSmallFrames))
        // Only the header of a 65-byte frame: refused before its payload is waited for.
        var header = clientFrame(.text, Array(repeating: 0x61, count: 65))
        try other.writeInbound(header.readSlice(length: 2)!)
        let bytes = try #require(try other.readOutbound(as: ByteBuffer.self))
        // 0x88: a final close frame; then its length and the code.
        #expect(bytes.getInteger(at: 0, as: UInt8.self) == 0x88)
        #expect(bytes.getBytes(at: 2, length: 2) == closePayload(1009))
        #expect(!other.isActive)
    }

    @Test("pongs count against a client that pings and never reads: it is closed with 1008 too")
    func pingingSlowClient() throws {
        // As a socket channel does when its buffers fill: the flag, then the event.
        channel.isWritable = false
        channel.pipeline.fireChannelWritabilityChanged()
        // Each pong is 2 + 2 bytes: three fit in the budget of three small frames, not four.
        for _ in 0..<3 { try channel.writeInbound(clientFrame(.ping, [0x61, 0x62])) }
        #expect(channel.isActive)
        #expect(try written().map(\.opcode) == [.pong, .pong, .pong])
        try channel.writeInbound(clientFrame(.ping, [0x61, 0x62]))
        let frames = try written()
        #expect(frames.map(\.opcode) == [.connectionClose])
        #expect(Array(frames.last!.payload.prefix(2)) == closePayload(1008))
    }

    @Test("a client that stops reading is closed with 1008 once too many bytes wait")
    func slowClient() throws {
        // As a socket channel does when its buffers fill: the flag, then the event.
        channel.isWritable = false
        channel.pipeline.fireChannelWritabilityChanged()
        for _ in 0..<3 { endpoint.connection!.write(WebSocketFrameBytes.frame(.text, ByteBuffer(string: "4x"))) }
        #expect(channel.isActive)
        endpoint.connection!.write(WebSocketFrameBytes.frame(.text, ByteBuffer(string: "4x")))
        let frames = try written()
        #expect(frames.map(\.opcode) == [.text, .text, .text, .connectionClose])
        #expect(Array(frames.last!.payload.prefix(2)) == closePayload(1008))
        // Once writable again the count starts over.
        channel.isWritable = true
        channel.pipeline.fireChannelWritabilityChanged()
    }

    @Test("a server close waits for the client's close, then ends; nothing is written after it")
    func serverClose() throws {
        endpoint.connection!.close(WebSocketCloseReason(.goingAway, "server shutting down"))
        endpoint.connection!.write(WebSocketFrameBytes.frame(.text, ByteBuffer(string: "4late")))
        endpoint.connection!.flush()
        let frames = try written()
        #expect(frames.count == 1 && frames[0].payload == closePayload(1001, "server shutting down"))
        #expect(channel.isActive)
        try channel.writeInbound(clientFrame(.connectionClose, closePayload(1001)))
        #expect(!channel.isActive)
    }

    @Test("the server's quiesce event reaches the endpoint")
    func quiesce() {
        channel.pipeline.fireUserInboundEventTriggered(ChannelShouldQuiesceEvent())
        #expect(endpoint.quiesced)
    }
}
