import Logging
import NIOCore
import NIOHTTP1

/// The first handler of every connection. When the connection's first request is a WebSocket
/// opening handshake the route accepts, it answers `101` and puts the connection's
/// ``WebSocketConnectionHandler`` in its own place: one handler added and one removed, with no
/// HTTP parser, encoder or upgrade handler set up and taken down again. Any other first request
/// (REST, long-polling, an upgrade the route declines, a head ``HTTPUpgradeRequestReader`` leaves
/// to NIO's parser) goes to the HTTP pipeline of ``WebSocketServerChannel``, set up behind this
/// handler then and handed every byte read so far, so it is served exactly as if this handler had
/// never been there.
///
/// The head is held to the HTTP pipeline's bounds: it must arrive whole within the idle timeout
/// (which the HTTP pipeline, when it takes over, goes on counting from the same start), a head
/// longer than the reader takes goes to NIO's parser and its limit (431), and a graceful shutdown
/// closes a connection still waiting for its head. A connection admitted by its first request's
/// address (``ConnectionsPerAddress/Source/firstRequest(_:)``) is admitted here the same way; one
/// refused goes to the HTTP pipeline, which refuses it again and says so (429).
final class WebSocketHandshakeHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let server: WebSocketServerChannel
    private let logger: Logger
    /// What the connection became, for ``WebSocketServerChannel/handle(value:logger:)``.
    private let result: EventLoopPromise<WebSocketServerChannel.UpgradeResult>
    private var reader = HTTPUpgradeRequestReader()
    /// The bytes read so far, the head's start first.
    private var buffered: ByteBuffer?
    /// When the head must have arrived whole; set when the connection opens.
    private var deadline: NIODeadline?
    private var timer: Scheduled<Void>?
    /// The head was handled (upgraded, or handed to the HTTP pipeline).
    private var isDone = false

    init(server: WebSocketServerChannel, result: EventLoopPromise<WebSocketServerChannel.UpgradeResult>, logger: Logger) {
        self.server = server
        self.result = result
        self.logger = logger
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { startClock(context: context) }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
    }

    func channelActive(context: ChannelHandlerContext) {
        startClock(context: context)
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
        if !isDone {
            isDone = true
            result.fail(ChannelError.inputClosed)
        }
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var bytes = unwrapInboundIn(data)
        guard !isDone else { return }
        if buffered == nil {
            buffered = bytes
        } else {
            buffered!.writeBuffer(&bytes)
        }
        switch reader.scan(buffered!) {
        case .needMore:
            return
        case .notForUs:
            handToHTTP(context: context)
        case .head(let end):
            if !upgrade(headEnd: end, context: context) { handToHTTP(context: context) }
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is ChannelShouldQuiesceEvent, !isDone {
            context.close(promise: nil)
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    private func startClock(context: ChannelHandlerContext) {
        guard deadline == nil else { return }
        let deadline = context.eventLoop.now + server.idleTimeout
        self.deadline = deadline
        let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
        timer = context.eventLoop.scheduleTask(deadline: deadline) {
            bound.value.close(promise: nil)
        }
    }

    /// Answers the head that ends at `headEnd` with `101` and becomes the WebSocket handler, when it
    /// is an upgrade the route accepts and the connection's address is admitted.
    private func upgrade(headEnd: Int, context: ChannelHandlerContext) -> Bool {
        guard var bytes = buffered, HTTPUpgradeRequestReader.hasUpgradeField(bytes.readableBytesView.prefix(headEnd)),
            let head = HTTPUpgradeRequestReader.parse(bytes.readableBytesView.prefix(headEnd)),
            head.isUpgradeToWebSocket,
            let (headers, accepted) = WebSocketUpgrader.accept(
                head, route: server.route, compression: server.limits.compression, responseHeaders: [:]
            ),
            server.admitsFirstRequest(head, on: context.channel)
        else { return false }
        isDone = true
        buffered = nil
        timer?.cancel()
        timer = nil
        context.write(wrapOutboundOut(Self.switchingProtocols(headers, allocator: context.channel.allocator)), promise: nil)
        do {
            try WebSocketUpgrader.addConnectionHandlers(
                to: context.pipeline.syncOperations, endpoint: accepted.makeEndpoint(context.channel), deflate: accepted.deflate,
                limits: server.limits, position: .after(self)
            )
        } catch {
            result.fail(error)
            context.close(promise: nil)
            return true
        }
        // Frames the client sent without waiting for the 101.
        bytes.moveReaderIndex(forwardBy: headEnd)
        if bytes.readableBytes > 0 { context.fireChannelRead(wrapInboundOut(bytes)) }
        // Flushed while this handler is in the pipeline: a removed handler's context writes nothing.
        context.flush()
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
        result.succeed(.upgraded)
        return true
    }

    /// Sets the HTTP pipeline up behind this handler, gives it every byte read so far and leaves.
    private func handToHTTP(context: ChannelHandlerContext) {
        isDone = true
        timer?.cancel()
        timer = nil
        do {
            try server.addHTTPHandlers(to: context.channel, logger: logger, requestDeadline: deadline).cascade(to: result)
        } catch {
            result.fail(error)
            context.close(promise: nil)
            return
        }
        if let bytes = buffered {
            buffered = nil
            context.fireChannelRead(wrapInboundOut(bytes))
        }
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
    }

    /// `HTTP/1.1 101 Switching Protocols` with `headers`, as NIO's encoder writes it.
    static func switchingProtocols(_ headers: HTTPHeaders, allocator: ByteBufferAllocator) -> ByteBuffer {
        var response = allocator.buffer(capacity: 192)
        response.writeStaticString("HTTP/1.1 101 Switching Protocols\r\n")
        for (name, value) in headers {
            response.writeString(name)
            response.writeStaticString(": ")
            response.writeString(value)
            response.writeStaticString("\r\n")
        }
        response.writeStaticString("\r\n")
        return response
    }
}

@available(*, unavailable)
extension WebSocketHandshakeHandler: Sendable {}
