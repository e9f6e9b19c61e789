public import HTTPTypes
public import HummingbirdCore
public import HummingbirdWebSocket
public import Logging
public import NIOCore
public import NIOWebSocket

/// The one WebSocket stack of Roomcast: the upgrade, the limits, how messages are read and how
/// frames are written.
///
/// The gateway serves Socket.IO with it, and the Autobahn conformance echo
/// (`Conformance/AutobahnEcho`, never part of the gateway) serves an echo with it, so the framing,
/// fragmentation, UTF-8, ping/pong and close handling that Autobahn|Testsuite checks are the ones
/// clients get.
public enum RoomcastWebSocket {
    /// The handler a connection runs once upgraded.
    public typealias Handler = WebSocketDataHandler<HTTP1WebSocketUpgradeChannel.Context>

    /// HTTP/1.1 with the WebSocket upgrade, configured as every Roomcast endpoint uses it.
    /// - Parameters:
    ///   - maxPayload: the largest frame and the largest reassembled message accepted, in bytes;
    ///     anything bigger closes the connection with 1009.
    ///   - shouldUpgrade: `.upgrade` with the connection's handler, or `.dontUpgrade` to hand the
    ///     request to the router.
    public static func server(
        maxPayload: Int,
        shouldUpgrade: @escaping @Sendable (HTTPRequest, any Channel, Logger) throws -> ShouldUpgradeResult<Handler>
    ) -> HTTPServerBuilder {
        HTTPServerBuilder.http1WebSocketUpgrade(configuration: configuration(maxPayload: maxPayload), shouldUpgrade: shouldUpgrade)
    }

    /// The upgrade channel's settings.
    ///
    /// Engine.IO pings on its own, so the WebSocket layer does not. Text is checked to be UTF-8
    /// (RFC 6455 §8.1): hummingbird-websocket otherwise repairs it silently; a bad message, or a
    /// close reason that is not UTF-8, now closes the connection with 1007 or 1002.
    static func configuration(maxPayload: Int) -> HTTP1WebSocketUpgradeChannel.Configuration {
        .init(ws: .init(maxFrameSize: maxPayload, autoPing: .disabled, validateUTF8: true))
    }

    /// The connection's messages, fragments reassembled, each at most `maxPayload` bytes.
    ///
    /// A protocol error (bad UTF-8, an unexpected continuation, a message too large …) is thrown:
    /// let it leave the connection's handler, so the connection closes with the error's code
    /// rather than 1000.
    public static func messages(_ inbound: WebSocketInboundStream, maxPayload: Int) -> WebSocketInboundMessageStream {
        inbound.messages(maxSize: maxPayload)
    }

    /// Writes one message as a single frame, never fragmented.
    /// - Parameters:
    ///   - data: the payload, already encoded (UTF-8 for text).
    ///   - opcode: `.text` or `.binary`.
    public static func write(_ data: ByteBuffer, opcode: WebSocketOpcode, to outbound: WebSocketOutboundWriter) async throws {
        try await outbound.write(.custom(WebSocketFrame(fin: true, opcode: opcode, data: data)))
    }
}
