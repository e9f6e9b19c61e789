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
    /// Frames that may wait for a client that reads too slowly before it is closed (1008).
    public var maxQueuedFrames: Int

    public init(maxMessageSize: Int, maxQueuedFrames: Int) {
        self.maxMessageSize = maxMessageSize
        self.maxQueuedFrames = maxQueuedFrames
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
    /// The accepted request's endpoint factory, from the response to the upgrade (one upgrader
    /// per connection, both steps on its event loop).
    let accepted: NIOLoopBoundBox<(@Sendable (any Channel) -> any WebSocketEndpoint)?>

    init(limits: WebSocketLimits, route: @escaping WebSocketRoute, eventLoop: any EventLoop) {
        self.limits = limits
        self.route = route
        self.accepted = NIOLoopBoundBox(nil, eventLoop: eventLoop)
    }

    func buildUpgradeResponse(channel: any Channel, upgradeRequest: HTTPRequestHead, initialResponseHeaders: HTTPHeaders) -> EventLoopFuture<HTTPHeaders> {
        channel.eventLoop.makeCompletedFuture {
            let keys = upgradeRequest.headers[canonicalForm: "sec-websocket-key"]
            guard keys.count == 1, upgradeRequest.headers.first(name: "sec-websocket-version") == "13",
                let makeEndpoint = route(try HTTPRequest(upgradeRequest, secure: false, splitCookie: false))
            else { throw Declined() }
            accepted.value = makeEndpoint
            var headers = initialResponseHeaders
            headers.replaceOrAdd(name: "Upgrade", value: "websocket")
            headers.replaceOrAdd(name: "Connection", value: "upgrade")
            headers.add(name: "Sec-WebSocket-Accept", value: Self.accept(key: String(keys[0])))
            return headers
        }
    }

    func upgrade(channel: any Channel, upgradeRequest: HTTPRequestHead) -> EventLoopFuture<WebSocketServerChannel.UpgradeResult> {
        channel.eventLoop.makeCompletedFuture {
            guard let makeEndpoint = accepted.value else { throw Declined() }
            accepted.value = nil
            let handler = WebSocketConnectionHandler(
                endpoint: makeEndpoint(channel), maxMessageSize: limits.maxMessageSize, maxQueuedFrames: limits.maxQueuedFrames
            )
            // NIO removes the HTTP handlers it added; the forwarding handler (HTTP parts in) goes too.
            let sync = channel.pipeline.syncOperations
            if let forwarding = try? sync.handler(type: ForwardingHandler.self) { sync.removeHandler(forwarding, promise: nil) }
            try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(WebSocketFrameDecoder(maxFrameSize: limits.maxMessageSize)))
            try channel.pipeline.syncOperations.addHandler(handler)
            return .upgraded
        }
    }

    /// `Sec-WebSocket-Accept`: the key and the protocol's GUID, hashed (RFC 6455 §4.2.2).
    static func accept(key: String) -> String {
        let digest = Insecure.SHA1.hash(data: Data((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").utf8))
        return Data(digest).base64EncodedString()
    }
}
