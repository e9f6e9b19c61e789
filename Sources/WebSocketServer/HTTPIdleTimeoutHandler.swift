import NIOCore
import NIOHTTP1

/// Closes an HTTP/1.1 connection that holds the node without a request in flight: from its
/// opening, or from the end of its last response, the next request must have arrived whole
/// (head and body) within `timeout`. That bounds time to the first request, slow headers and
/// bodies (partial headers never reset it), and idle keep-alive connections alike. While a
/// response is being made (a long poll, say) no clock runs.
///
/// On a graceful shutdown a connection waiting for a request closes at once, whatever the client
/// sends, so a half-sent request cannot hold the drain up. Sits right after the request decoder;
/// an upgraded or forwarded connection takes it out (``remove(from:)``), as it carries no more
/// HTTP parts.
final class HTTPIdleTimeoutHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    private enum State {
        /// No request in flight, or one not read whole yet: the clock runs.
        case waitingForRequest
        /// The request was read; its response is being made.
        case responding
    }

    private let timeout: TimeAmount
    /// When the first request must have arrived, if its clock started before this handler came.
    private var firstDeadline: NIODeadline?
    private var state = State.waitingForRequest
    private var timer: Scheduled<Void>?

    /// - Parameter firstDeadline: the first request's deadline, when its clock started earlier
    ///   (``WebSocketHandshakeHandler`` read the start of it); `nil`: `timeout` from now.
    init(timeout: TimeAmount, firstDeadline: NIODeadline? = nil) {
        self.timeout = timeout
        self.firstDeadline = firstDeadline
    }

    /// Takes the handler out of `pipeline`, if it is there.
    static func remove(from pipeline: ChannelPipeline.SynchronousOperations) {
        if let handler = try? pipeline.handler(type: HTTPIdleTimeoutHandler.self) { pipeline.removeHandler(handler, promise: nil) }
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { arm(context: context) }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
    }

    func channelActive(context: ChannelHandlerContext) {
        arm(context: context)
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .end = unwrapInboundIn(data) {
            state = .responding
            timer?.cancel()
            timer = nil
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let isEnd = if case .end = unwrapOutboundIn(data) { true } else { false }
        context.write(data, promise: promise)
        if isEnd {
            state = .waitingForRequest
            arm(context: context)
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is ChannelShouldQuiesceEvent, case .waitingForRequest = state {
            context.close(promise: nil)
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    private func arm(context: ChannelHandlerContext) {
        timer?.cancel()
        let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
        let deadline = firstDeadline ?? context.eventLoop.now + timeout
        firstDeadline = nil
        timer = context.eventLoop.scheduleTask(deadline: deadline) {
            bound.value.close(promise: nil)
        }
    }
}

@available(*, unavailable)
extension HTTPIdleTimeoutHandler: Sendable {}
