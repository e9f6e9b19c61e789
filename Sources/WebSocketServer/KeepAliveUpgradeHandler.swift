import NIOCore
import NIOHTTP1

/// Upgrades to WebSocket on a connection that served other HTTP requests first.
///
/// NIO's upgrade handler looks at a connection's first request only; Node's HTTP server, which
/// the reference Socket.IO server runs on, takes an upgrade on any request of a keep-alive
/// connection, and clients rely on it: aiohttp (python-socketio's async client) upgrades on a
/// pooled connection, and so does an nginx upstream with `keepalive`. Sits between the request
/// decoder and Hummingbird's HTTP handlers once the connection serves HTTP, and looks at every
/// request head: an upgrade the ``WebSocketRoute`` accepts is answered here (after the response
/// in flight, if any) and the connection becomes a WebSocket connection; anything else goes on.
final class KeepAliveUpgradeHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    private struct Upgrade {
        let headers: HTTPHeaders
        let accepted: WebSocketUpgrader.Accepted
        /// The request's end was read: nothing of it is left to swallow.
        var isRequestComplete = false
    }

    private let route: WebSocketRoute
    private let limits: WebSocketLimits
    /// Hummingbird is answering a request: an upgrade waits for the end of that response.
    private var isResponding = false
    private var upgrade: Upgrade?

    init(route: @escaping WebSocketRoute, limits: WebSocketLimits) {
        self.route = route
        self.limits = limits
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let part = unwrapInboundIn(data)
        if upgrade != nil {
            // The upgrade request's body (none is expected) and end, then nothing: the decoder
            // stops after an upgrade request.
            if case .end = part {
                upgrade!.isRequestComplete = true
                if !isResponding { switchToWebSocket(context: context) }
            }
            return
        }
        guard case .head(var head) = part, head.isUpgradeToWebSocket else {
            if case .head = part { isResponding = true }
            return context.fireChannelRead(data)
        }
        if let (headers, accepted) = WebSocketUpgrader.accept(head, route: route, compression: limits.compression, responseHeaders: [:]) {
            upgrade = Upgrade(headers: headers, accepted: accepted)
            return
        }
        // Declined: the router answers it (and says why). HTTP's decoder reads nothing after an
        // upgrade request, so the connection closes after that answer instead of hanging.
        head.headers.replaceOrAdd(name: "connection", value: "close")
        isResponding = true
        context.fireChannelRead(wrapInboundOut(.head(head)))
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let part = unwrapOutboundIn(data)
        context.write(data, promise: promise)
        guard case .end = part else { return }
        isResponding = false
        if upgrade?.isRequestComplete == true { switchToWebSocket(context: context) }
    }

    /// Answers the upgrade and hands the connection to the WebSocket handlers: the HTTP encoder,
    /// this handler, the interceptor, the idle timeout and the request decoder leave the pipeline (the
    /// decoder last: the bytes it holds past the request are WebSocket frames, passed on).
    /// Hummingbird's handlers stay behind the WebSocket handler, which passes them nothing
    /// but the connection's end.
    private func switchToWebSocket(context: ChannelHandlerContext) {
        guard let upgrade else { return }
        self.upgrade = nil
        let response = HTTPResponseHead(version: .http1_1, status: .switchingProtocols, headers: upgrade.headers)
        context.writeAndFlush(wrapOutboundOut(.head(response)), promise: nil)
        let sync = context.pipeline.syncOperations
        do {
            let decoder = try sync.handler(type: ByteToMessageHandler<HTTPRequestDecoder>.self)
            if let encoder = try? sync.handler(type: HTTPResponseEncoder.self) { sync.removeHandler(encoder, promise: nil) }
            try WebSocketUpgrader.addConnectionHandlers(
                to: sync, endpoint: upgrade.accepted.makeEndpoint(context.channel), deflate: upgrade.accepted.deflate, limits: limits,
                position: .after(decoder)
            )
            sync.removeRequestStageHandlers()
            sync.removeHandler(context: context, promise: nil)
            sync.removeHandler(decoder, promise: nil)
        } catch {
            context.close(promise: nil)
        }
    }
}

@available(*, unavailable)
extension KeepAliveUpgradeHandler: Sendable {}

extension HTTPRequestHead {
    /// Whether the request asks to switch to WebSocket (`Connection: upgrade`, `Upgrade: websocket`).
    var isUpgradeToWebSocket: Bool {
        headers[canonicalForm: "connection"].contains { $0.lowercased() == "upgrade" }
            && headers[canonicalForm: "upgrade"].contains { $0.lowercased() == "websocket" }
    }
}
