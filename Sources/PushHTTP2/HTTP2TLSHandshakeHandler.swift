import NIOCore
import NIOTLS

/// Sits behind the TLS handler and completes `promise` when the handshake agreed on HTTP/2, or
/// fails it with why the connection cannot be used. Passes everything else through.
final class HTTP2TLSHandshakeHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = Any

    private let endpoint: HTTP2Endpoint
    private let deadline: NIODeadline
    private let promise: EventLoopPromise<Void>
    private var finished = false
    private var timer: Scheduled<Void>?

    init(endpoint: HTTP2Endpoint, deadline: NIODeadline, promise: EventLoopPromise<Void>) {
        self.endpoint = endpoint
        self.deadline = deadline
        self.promise = promise
    }

    func handlerAdded(context: ChannelHandlerContext) {
        let loopBoundContext = NIOLoopBound(context, eventLoop: context.eventLoop)
        timer = context.eventLoop.assumeIsolated().scheduleTask(deadline: deadline) { [self] in
            finish(.failure(HTTP2ClientError.timeout.with("TLS handshake with \(endpoint) did not finish in time")))
            loopBoundContext.value.close(promise: nil)
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        finish(.failure(HTTP2ClientError.connectionFailed.with("connection to \(endpoint) closed during the TLS handshake")))
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? TLSUserEvent, case .handshakeCompleted(let negotiatedProtocol) = event {
            if negotiatedProtocol == "h2" {
                finish(.success(()))
            } else {
                finish(.failure(HTTP2ClientError.connectionFailed.with("\(endpoint) did not agree to HTTP/2 (ALPN: \(negotiatedProtocol ?? "none"))")))
                context.close(promise: nil)
            }
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        finish(.failure(HTTP2ClientError.connectionFailed.with("TLS handshake with \(endpoint) failed", underlying: error)))
        context.fireErrorCaught(error)
    }

    func channelInactive(context: ChannelHandlerContext) {
        finish(.failure(HTTP2ClientError.connectionFailed.with("connection to \(endpoint) closed during the TLS handshake")))
        context.fireChannelInactive()
    }

    private func finish(_ result: Result<Void, HTTP2ClientError>) {
        guard !finished else { return }
        finished = true
        timer?.cancel()
        promise.completeWith(result.mapError { $0 })
    }
}
