import Crypto
import Foundation
public import HTTPTypes
public import NIOCore
public import NIOHTTP1
import NIOHTTPTypesHTTP1
import NIOWebSocket

/// Which upgrade requests become WebSocket connections, and the endpoint each one gets.
///
/// Called with the request on the connection's event loop; `nil` declines, and the request goes
/// on to the HTTP router (which can say why).
public typealias WebSocketRoute = @Sendable (HTTPRequest) -> (@Sendable (any Channel) -> any WebSocketEndpoint)?

/// The limits of every upgraded connection.
public struct WebSocketLimits: Sendable {
    /// The largest frame, and the largest message once its fragments are joined (1009 above it).
    public var maxMessageSize: Int
    /// Bytes that may wait for a client that reads too slowly before it is closed (1008),
    /// counted as ``OutboundBudget`` does.
    public var maxQueuedBytes: Int
    /// Whether permessage-deflate is offered, and from what message size it is used.
    public var compression: WebSocketCompression

    public init(maxMessageSize: Int, maxQueuedBytes: Int, compression: WebSocketCompression = .off) {
        self.maxMessageSize = maxMessageSize
        self.maxQueuedBytes = maxQueuedBytes
        self.compression = compression
    }
}

/// The RFC 6455 opening handshake, installing a ``WebSocketConnectionHandler`` with the frame
/// decoder and no frame encoder: frames are written already encoded (``WebSocketFrameBytes``).
struct WebSocketUpgrader: NIOTypedHTTPServerProtocolUpgrader {
    /// Thrown to NIO when a request is not upgraded, which hands it to the HTTP router.
    struct Declined: Error {}

    let supportedProtocol = "websocket"
    // Headers that must also be named in `Connection` (none for WebSocket): the key and version
    // are checked in `buildUpgradeResponse`.
    let requiredUpgradeHeaders: [String] = []
    let limits: WebSocketLimits
    let route: WebSocketRoute
    /// The accepted request's endpoint factory and compression, from the response to the
    /// upgrade (one upgrader per connection, both steps on its event loop).
    let accepted: NIOLoopBoundBox<Accepted?>

    init(limits: WebSocketLimits, route: @escaping WebSocketRoute, eventLoop: any EventLoop) {
        self.limits = limits
        self.route = route
        self.accepted = NIOLoopBoundBox(nil, eventLoop: eventLoop)
    }

    func buildUpgradeResponse(channel: any Channel, upgradeRequest: HTTPRequestHead, initialResponseHeaders: HTTPHeaders) -> EventLoopFuture<HTTPHeaders> {
        channel.eventLoop.makeCompletedFuture {
            guard let (headers, accepted) = Self.accept(upgradeRequest, route: route, compression: limits.compression, responseHeaders: initialResponseHeaders) else {
                throw Declined()
            }
            self.accepted.value = accepted
            // Out now, before NIO removes the request decoder: the bytes the client sent after
            // its request (frames it did not wait to send) then go on to NIO's upgrade handler,
            // which buffers them, and never to this handler, which takes HTTP parts only.
            let sync = channel.pipeline.syncOperations
            sync.removeRequestStageHandlers()
            return headers
        }
    }

    func upgrade(channel: any Channel, upgradeRequest: HTTPRequestHead) -> EventLoopFuture<WebSocketServerChannel.UpgradeResult> {
        channel.eventLoop.makeCompletedFuture {
            guard let upgrade = accepted.value else { throw Declined() }
            accepted.value = nil
            // NIO removed the HTTP handlers it added, and the response the forwarding and idle handlers.
            try Self.addConnectionHandlers(
                to: channel.pipeline.syncOperations, endpoint: upgrade.makeEndpoint(channel), deflate: upgrade.deflate, limits: limits, position: .last
            )
            return .upgraded
        }
    }

    /// What an accepted upgrade request gets.
    struct Accepted {
        let makeEndpoint: @Sendable (any Channel) -> any WebSocketEndpoint
        /// permessage-deflate, when compression is on and the client offered it acceptably.
        let deflate: PerMessageDeflate?
    }

    /// The response headers, the endpoint and the compression of an upgrade request that
    /// `route` accepts with a valid key and version, or `nil`.
    static func accept(
        _ request: HTTPRequestHead,
        route: WebSocketRoute,
        compression: WebSocketCompression,
        responseHeaders: HTTPHeaders
    ) -> (HTTPHeaders, Accepted)? {
        let keys = request.headers[canonicalForm: "sec-websocket-key"]
        guard keys.count == 1, request.headers.first(name: "sec-websocket-version") == "13",
            let head = try? HTTPRequest(request, secure: false, splitCookie: false),
            let makeEndpoint = route(head)
        else { return nil }
        var headers = responseHeaders
        headers.replaceOrAdd(name: "Upgrade", value: "websocket")
        headers.replaceOrAdd(name: "Connection", value: "upgrade")
        headers.add(name: "Sec-WebSocket-Accept", value: Self.accept(key: String(keys[0])))
        let deflate = PerMessageDeflate.negotiate(request.headers, compression: compression)
        if let deflate { headers.add(name: "Sec-WebSocket-Extensions", value: deflate.response) }
        return (headers, Accepted(makeEndpoint: makeEndpoint, deflate: deflate?.1))
    }

    /// The connection's handler, which runs an upgraded connection (it parses frames itself).
    static func addConnectionHandlers(
        to pipeline: ChannelPipeline.SynchronousOperations,
        endpoint: any WebSocketEndpoint,
        deflate: PerMessageDeflate?,
        limits: WebSocketLimits,
        position: ChannelPipeline.SynchronousOperations.Position
    ) throws {
        let handler = WebSocketConnectionHandler(
            endpoint: endpoint, maxMessageSize: limits.maxMessageSize, maxQueuedBytes: limits.maxQueuedBytes, deflate: deflate
        )
        try pipeline.addHandler(handler, position: position)
    }

    /// `Sec-WebSocket-Accept`: the key and the protocol's GUID, hashed (RFC 6455 §4.2.2).
    static func accept(key: String) -> String {
        let digest = Insecure.SHA1.hash(data: Data((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").utf8))
        return Data(digest).base64EncodedString()
    }
}
