import NIOCore
import NIOSSL
import NIOTLS

/// Sits behind the TLS handler while a connection opens and completes `promise` when the TLS
/// handshake is done, or fails it saying why the server was refused (or refused us). Removes
/// itself once it has answered; everything else passes through.
final class RedisTLSHandshakeHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = Any

    private let endpoint: RedisEndpoint
    private let tls: RedisTLS
    private let deadline: NIODeadline
    private let promise: EventLoopPromise<Void>
    private var finished = false
    private var timer: Scheduled<Void>?

    init(endpoint: RedisEndpoint, tls: RedisTLS, deadline: NIODeadline, promise: EventLoopPromise<Void>) {
        self.endpoint = endpoint
        self.tls = tls
        self.deadline = deadline
        self.promise = promise
    }

    func handlerAdded(context: ChannelHandlerContext) {
        let loopBoundContext = NIOLoopBound(context, eventLoop: context.eventLoop)
        timer = context.eventLoop.assumeIsolated().scheduleTask(deadline: deadline) { [self] in
            // A plain Redis port reads a ClientHello as the start of a command and waits for more.
            finish(.failure(RedisError(.connectionFailed, "TLS handshake with \(endpoint) did not finish in time (is it a TLS port?)")))
            loopBoundContext.value.close(promise: nil)
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        finish(.failure(RedisError(.connectionFailed, "connection to \(endpoint) closed during the TLS handshake")))
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? TLSUserEvent, case .handshakeCompleted = event {
            finish(.success(()))
            context.fireUserInboundEventTriggered(event)
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        finish(.failure(RedisError(.connectionFailed, tls.explain(error, endpoint: endpoint), underlying: error)))
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        finish(.failure(RedisError(.connectionFailed, "\(endpoint) closed the connection during the TLS handshake (is it a TLS port?)")))
        context.fireChannelInactive()
    }

    private func finish(_ result: Result<Void, RedisError>) {
        guard !finished else { return }
        finished = true
        timer?.cancel()
        promise.completeWith(result.mapError { $0 })
    }
}

extension RedisTLS {
    /// Says in words why a TLS connection to `endpoint` failed, for the log an operator reads at
    /// start-up: which side refused what, and which setting decides it. TLS's own words follow
    /// in the error's `underlying`.
    func explain(_ error: any Error, endpoint: RedisEndpoint) -> String {
        if let extra = error as? NIOSSLExtraError, extra == .failedToValidateHostname {
            let expected = serverHostname(for: endpoint.host) ?? endpoint.host
            return "the TLS certificate of \(endpoint) is not for '\(expected)' (set the TLS server name to the name the certificates carry)"
        }
        let text = String(describing: error)
        if text.contains("CERTIFICATE_VERIFY_FAILED") {
            let roots = caFile.map { "the CA file '\($0)'" } ?? "the system's trust store (set a CA file)"
            return "the TLS certificate of \(endpoint) is not trusted: not signed by an authority of \(roots), or expired"
        }
        if text.contains("CERTIFICATE_REQUIRED") || text.contains("BAD_CERTIFICATE") || text.contains("UNKNOWN_CA")
            || text.contains("CERTIFICATE_UNKNOWN")
        {
            let shown = certificateFile.map { "the client certificate '\($0)'" } ?? "no client certificate (none is set)"
            return "\(endpoint) refused the TLS client: it asks for a client certificate its CA signed, and got \(shown)"
        }
        if text.contains("WRONG_VERSION_NUMBER") || text.contains("PACKET_LENGTH_TOO_LONG") {
            return "\(endpoint) does not speak TLS on this port"
        }
        return "TLS with \(endpoint) failed"
    }
}
