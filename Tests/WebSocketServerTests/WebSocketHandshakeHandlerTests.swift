import HTTPTypes
import HummingbirdCore
import Logging
import NIOCore
import NIOEmbedded
import NIOHTTP1
import NIOWebSocket
import Testing

@testable import WebSocketServer

/// Counts what an upgraded connection hands its endpoint.
private final class MessageLog: WebSocketEndpoint, @unchecked Sendable {
    var opened = 0
    var messages: [WebSocketDataMessage] = []

    func opened(_ connection: WebSocketConnectionHandler) { opened += 1 }
    func received(_ message: WebSocketDataMessage) { messages.append(message) }
    func shouldQuiesce() {}
    func closed() {}
}

@Suite("WebSocketHandshakeHandler: a first request that is a handshake upgraded in one step; any other to the HTTP pipeline")
struct WebSocketHandshakeHandlerTests {
    /// RFC 6455 §1.3's key, whose accept value is `s3pPLMBiTxaQ9kYGzzhZRbK+xOo=`.
    static func handshake(path: String = "/ws", extraHeaders: String = "") -> String {
        "GET \(path) HTTP/1.1\r\nHost: server.example.com\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\(extraHeaders)\r\n"
    }

    static let switchingProtocols =
        "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: upgrade\r\nSec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n"

    static let idleTimeout = TimeAmount.seconds(30)

    private let endpoint = MessageLog()
    private let channel = EmbeddedChannel()

    /// Sets the channel up as the server does (paths under `/ws` are WebSocket endpoints), then
    /// connects it; what the connection becomes.
    private func start(connections: ConnectionsPerAddress? = nil) throws -> EventLoopFuture<WebSocketServerChannel.UpgradeResult> {
        let endpoint = endpoint
        let responder: WebSocketServerChannel.Responder = { _, _, _ in }
        let makeEndpoint: @Sendable (any Channel) -> any WebSocketEndpoint = { _ in endpoint }
        let route: WebSocketRoute = { head in head.path?.hasPrefix("/ws") == true ? makeEndpoint : nil }
        let server = WebSocketServerChannel(
            responder: responder,
            limits: WebSocketLimits(maxMessageSize: 1024, maxQueuedBytes: 4096),
            route: route,
            interceptor: nil,
            idleTimeout: Self.idleTimeout,
            connectionsPerAddress: connections
        )
        let value = try server.setup(channel: channel, logger: Logger(label: "test")).wait()
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        return value.upgradeResult
    }

    private func writeInbound(_ text: String) throws {
        try channel.writeInbound(ByteBuffer(string: text))
    }

    /// Everything written so far, as text.
    private func written() throws -> String {
        channel.embeddedEventLoop.run()
        var text = ""
        while let bytes = try channel.readOutbound(as: ByteBuffer.self) { text += String(buffer: bytes) }
        return text
    }

    private func has<Handler: ChannelHandler>(_ type: Handler.Type) -> Bool {
        (try? channel.pipeline.syncOperations.handler(type: type)) != nil
    }

    /// What the connection became, once the loop ran what it was given; `nil`: not yet known.
    private func outcome(_ result: EventLoopFuture<WebSocketServerChannel.UpgradeResult>) -> Result<WebSocketServerChannel.UpgradeResult, any Error>? {
        channel.embeddedEventLoop.run()
        var outcome: Result<WebSocketServerChannel.UpgradeResult, any Error>?
        result.whenComplete { outcome = $0 }
        return outcome
    }

    private func isUpgraded(_ result: EventLoopFuture<WebSocketServerChannel.UpgradeResult>) -> Bool {
        if case .success(.upgraded) = outcome(result) { return true }
        return false
    }

    private func isNotUpgraded(_ result: EventLoopFuture<WebSocketServerChannel.UpgradeResult>) -> Bool {
        if case .success(.notUpgraded) = outcome(result) { return true }
        return false
    }

    @Test("a handshake with a frame behind it in one read: 101, the frame delivered, and the WebSocket handler alone in the pipeline")
    func upgradedInOneStep() throws {
        let result = try start()
        var bytes = ByteBuffer(string: Self.handshake())
        bytes.writeImmutableBuffer(clientFrameBytes(.text, Array("hello".utf8)))
        try channel.writeInbound(bytes)
        #expect(try written() == Self.switchingProtocols)
        #expect(isUpgraded(result))
        #expect(endpoint.opened == 1)
        #expect(endpoint.messages == [.text(ByteBuffer(string: "hello"))])
        #expect(has(WebSocketConnectionHandler.self))
        #expect(!has(WebSocketHandshakeHandler.self))
        #expect(!has(ByteToMessageHandler<HTTPRequestDecoder>.self))
        #expect(!has(HTTPIdleTimeoutHandler.self))
        // Nothing of the clock is left: the connection outlives the idle timeout.
        channel.embeddedEventLoop.advanceTime(by: Self.idleTimeout * 2)
        #expect(channel.isActive)
    }

    @Test("a handshake arriving a byte at a time is answered once it is whole")
    func handshakeInPieces() throws {
        let result = try start()
        for byte in Self.handshake().utf8.dropLast() {
            try channel.writeInbound(ByteBuffer(bytes: [byte]))
        }
        #expect(try written() == "")
        #expect(has(WebSocketHandshakeHandler.self))
        try writeInbound("\n")
        #expect(try written() == Self.switchingProtocols)
        #expect(isUpgraded(result))
    }

    @Test("a handshake NIO's parser takes and this reader does not is upgraded by the HTTP pipeline with the same answer")
    func sameAnswerBothWays() throws {
        let result = try start()
        // A byte outside ASCII in a field value: NIO's parser accepts it, the reader hands it off.
        try channel.writeInbound(ByteBuffer(bytes: Array(Self.handshake(extraHeaders: "X-Name: Zoë\r\n").utf8)))
        let answer = try written()
        #expect(answer == Self.switchingProtocols)
        #expect(isUpgraded(result))
        #expect(endpoint.opened == 1)
        #expect(!has(WebSocketHandshakeHandler.self))
    }

    @Test("a request that is not a GET goes to the HTTP pipeline at its first bytes, with every byte")
    func otherMethods() throws {
        let result = try start()
        try writeInbound("POST ")
        #expect(!has(WebSocketHandshakeHandler.self))
        #expect(has(ByteToMessageHandler<HTTPRequestDecoder>.self))
        #expect(has(HTTPIdleTimeoutHandler.self))
        try writeInbound("/api/rooms HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n")
        #expect(isNotUpgraded(result))
    }

    @Test("an upgrade the route declines goes to the HTTP pipeline, not upgraded")
    func declined() throws {
        let result = try start()
        // NIO's upgrade handler reports the upgrader's refusal as an error, then passes the request on.
        _ = try? channel.writeInbound(ByteBuffer(string: Self.handshake(path: "/elsewhere")))
        #expect(isNotUpgraded(result))
        #expect(endpoint.opened == 0)
        #expect(!has(WebSocketHandshakeHandler.self))
    }

    @Test("a head not whole within the idle timeout closes the connection")
    func slowHead() throws {
        let result = try start()
        try writeInbound("GET /ws HTTP/1.1\r\nHost: a\r\n")
        channel.embeddedEventLoop.advanceTime(by: Self.idleTimeout - .seconds(1))
        #expect(channel.isActive)
        channel.embeddedEventLoop.advanceTime(by: .seconds(1))
        #expect(!channel.isActive)
        guard case .failure = outcome(result) else {
            Issue.record("not failed: \(String(describing: outcome(result)))")
            return
        }
    }

    @Test("handed to the HTTP pipeline, the first request keeps the deadline it had")
    func deadlineCarriedOver() throws {
        _ = try start()
        channel.embeddedEventLoop.advanceTime(by: .seconds(20))
        try writeInbound("POST /api/rooms HTTP/1.1\r\n")
        #expect(has(HTTPIdleTimeoutHandler.self))
        channel.embeddedEventLoop.advanceTime(by: .seconds(9))
        #expect(channel.isActive)
        channel.embeddedEventLoop.advanceTime(by: .seconds(1))
        #expect(!channel.isActive)
    }

    @Test("a graceful shutdown closes a connection still waiting for its head")
    func quiesce() throws {
        _ = try start()
        try writeInbound("GET /ws HT")
        channel.pipeline.fireUserInboundEventTriggered(ChannelShouldQuiesceEvent())
        #expect(!channel.isActive)
    }

    @Test("counted by the address its first request names: admitted upgrades count; one over the limit is answered 429 by the HTTP pipeline")
    func admittedByFirstRequest() throws {
        let connections = ConnectionsPerAddress(limit: 1, source: .firstRequest { $0.headers.first(name: "x-forwarded-for") })
        let forwarded = "X-Forwarded-For: 203.0.113.9\r\n"
        let result = try start(connections: connections)
        try writeInbound(Self.handshake(extraHeaders: forwarded))
        #expect(isUpgraded(result))
        #expect(connections.count(of: "203.0.113.9") == 1)

        let second = WebSocketHandshakeHandlerTests()
        _ = try second.start(connections: connections)
        try second.writeInbound(Self.handshake(extraHeaders: forwarded))
        #expect(try second.written().hasPrefix("HTTP/1.1 429 Too Many Requests\r\n"))
        #expect(second.endpoint.opened == 0)
        #expect(connections.count(of: "203.0.113.9") == 1)
    }
}
