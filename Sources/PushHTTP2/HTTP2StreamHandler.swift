import NIOCore
import NIOHPACK
import NIOHTTP2

/// Drives one HTTP/2 stream: writes the request, reads the answer, and completes `promise` once,
/// with the response or with why none came. Lives on the stream's event loop, which owns its state.
final class HTTP2StreamHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTP2Frame.FramePayload
    typealias OutboundOut = HTTP2Frame.FramePayload

    /// The most response body bytes kept.
    static let maximumBodySize = 64 * 1024

    private let headers: HPACKHeaders
    private let body: ByteBuffer
    private let deadline: NIODeadline
    private let promise: EventLoopPromise<HTTP2Response>
    private var started = false
    private var finished = false
    private var timer: Scheduled<Void>?
    private var status: Int?
    private var responseHeaders: HPACKHeaders = [:]
    private var responseBody: ByteBuffer?

    init(headers: HPACKHeaders, body: ByteBuffer, deadline: NIODeadline, promise: EventLoopPromise<HTTP2Response>) {
        self.headers = headers
        self.body = body
        self.deadline = deadline
        self.promise = promise
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { start(context: context) }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        // Whatever happened, the caller must not wait forever.
        finish(.failure(HTTP2ClientError.connectionClosed.with("the stream ended before the server answered")))
    }

    func channelActive(context: ChannelHandlerContext) {
        start(context: context)
        context.fireChannelActive()
    }

    private func start(context: ChannelHandlerContext) {
        guard !started else { return }
        started = true
        let loopBoundContext = NIOLoopBound(context, eventLoop: context.eventLoop)
        timer = context.eventLoop.assumeIsolated().scheduleTask(deadline: deadline) { [self] in
            // Closing the stream sends RST_STREAM, so the server stops working on it too.
            finish(.failure(HTTP2ClientError.timeout.with("no answer within the request timeout")))
            loopBoundContext.value.close(promise: nil)
        }
        let endStreamOnHeaders = body.readableBytes == 0
        context.write(wrapOutboundOut(.headers(.init(headers: headers, endStream: endStreamOnHeaders))), promise: nil)
        if !endStreamOnHeaders {
            context.write(wrapOutboundOut(.data(.init(data: .byteBuffer(body), endStream: true))), promise: nil)
        }
        context.flush()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .headers(let frame):
            readHeaders(frame.headers, context: context)
            if frame.endStream { complete(context: context) }
        case .data(let frame):
            if case .byteBuffer(var bytes) = frame.data {
                // Push services answer in a few hundred bytes; anything far bigger is cut.
                if (responseBody?.readableBytes ?? 0) + bytes.readableBytes <= Self.maximumBodySize {
                    responseBody.setOrWriteBuffer(&bytes)
                }
            }
            if frame.endStream { complete(context: context) }
        default:
            break
        }
    }

    private func readHeaders(_ headers: HPACKHeaders, context: ChannelHandlerContext) {
        // Trailers carry no :status; an informational 1xx head is followed by the real one.
        guard let statusText = headers.first(name: ":status") else { return }
        guard let value = Int(statusText) else {
            finish(.failure(HTTP2ClientError.protocolError.with("the server sent :status '\(statusText)'")))
            context.close(promise: nil)
            return
        }
        guard value >= 200 else { return }
        status = value
        responseHeaders = headers
    }

    private func complete(context: ChannelHandlerContext) {
        guard let status else {
            finish(.failure(HTTP2ClientError.protocolError.with("the server ended the stream without a response head")))
            context.close(promise: nil)
            return
        }
        finish(.success(HTTP2Response(status: status, headers: responseHeaders, body: responseBody)))
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if let reset = error as? NIOHTTP2Errors.StreamClosed {
            finish(.failure(HTTP2ClientError.protocolError.with("the server reset the stream (\(reset.errorCode))", underlying: error)))
        } else {
            finish(.failure(HTTP2ClientError.protocolError.with("the stream failed", underlying: error)))
        }
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        // The stream also closes when its connection does: every stream still waiting ends here.
        finish(.failure(HTTP2ClientError.connectionClosed.with("the connection closed before the server answered")))
        context.fireChannelInactive()
    }

    private func finish(_ result: Result<HTTP2Response, HTTP2ClientError>) {
        guard !finished else { return }
        finished = true
        timer?.cancel()
        promise.completeWith(result.mapError { $0 })
    }
}
