public import NIOCore
public import NIOWebSocket

/// The WebSocket protocol of one upgraded connection, as a plain NIO handler, the only one in
/// its pipeline: frames from the bytes read, control frames, the close handshake, reassembly
/// and validation, and writes of frames already encoded.
///
/// Why not hummingbird-websocket here: its per-connection tasks, async streams and buffers cost
/// about 25 KiB per idle connection, and every frame sent to a socket went through a task hop
/// of its own. Here an idle connection is its channel and this handler, and a fan-out writes the
/// same frame bytes to each channel from its event loop.
public final class WebSocketConnectionHandler: ChannelInboundHandler {
    public typealias InboundIn = ByteBuffer
    public typealias OutboundOut = ByteBuffer

    /// How long the server waits for the client's close frame after sending its own.
    static let closeTimeout: TimeAmount = .seconds(2)

    private enum State {
        case open
        /// The server sent its close frame and waits for the client's.
        case closing
        case closed
    }

    private let endpoint: any WebSocketEndpoint
    private var parser: WebSocketFrameParser
    private var assembler: WebSocketMessageAssembler
    /// permessage-deflate, when the upgrade negotiated it.
    private let deflate: PerMessageDeflate?
    /// Decompresses the compressed message being received; `nil` between messages, so an idle
    /// connection holds no zlib memory (the client uses no context takeover).
    private(set) var inflater: PerMessageInflater?
    /// Bytes written while the socket could not take more (the kernel buffer and NIO's high
    /// watermark both full), every frame counted, control frames too; past the budget the
    /// client is too slow and is closed.
    private var unread: OutboundBudget
    /// The channel's writability as its last `channelWritabilityChanged` told (NIO fires it as
    /// soon as a write or a flush flips it). Read for every frame of a fan-out, where asking the
    /// channel itself was 5 % of a node's samples: a reference to it and a cold cache line for
    /// each recipient.
    private var isWritable = true
    private var state = State.open
    private var context: ChannelHandlerContext?

    /// - Parameters:
    ///   - maxMessageSize: the largest message, fragments together.
    ///   - maxQueuedBytes: how many bytes may wait for a client that reads too slowly.
    public convenience init(endpoint: any WebSocketEndpoint, maxMessageSize: Int, maxQueuedBytes: Int) {
        self.init(endpoint: endpoint, maxMessageSize: maxMessageSize, maxQueuedBytes: maxQueuedBytes, deflate: nil)
    }

    /// - Parameter deflate: permessage-deflate as the upgrade negotiated it, or `nil`.
    init(endpoint: any WebSocketEndpoint, maxMessageSize: Int, maxQueuedBytes: Int, deflate: PerMessageDeflate?) {
        self.endpoint = endpoint
        self.parser = WebSocketFrameParser(maxFrameSize: maxMessageSize)
        self.assembler = WebSocketMessageAssembler(maxMessageSize: maxMessageSize)
        self.unread = OutboundBudget(limit: maxQueuedBytes)
        self.deflate = deflate
    }

    /// Whether the connection negotiated permessage-deflate.
    public var isCompressionNegotiated: Bool { deflate != nil }

    /// The connection's event loop: call the methods below on it only.
    public var eventLoop: any EventLoop { context!.eventLoop }

    // MARK: Writing

    /// Queues a frame from ``WebSocketFrameBytes``; it goes out at the next ``flush()``.
    /// Nothing is written once the connection is closing.
    public func write(_ frame: ByteBuffer) {
        guard case .open = state, let context else { return }
        if !isWritable, !unread.take(frame) {
            close(WebSocketCloseReason(.policyViolation, "client too slow to receive its events"))
            return
        }
        context.write(wrapOutboundOut(frame), promise: nil)
    }

    /// Queues a data message: compressed when the connection negotiated permessage-deflate and
    /// the message is large enough, the compressed bytes shared with every connection that
    /// negotiated the same window (``WebSocketOutboundMessage``).
    public func write(_ message: WebSocketOutboundMessage) {
        write(message.frame(for: deflate))
    }

    /// Sends what was written.
    public func flush() {
        context?.flush()
    }

    /// Sends a close frame after what was written, then waits a moment for the client's close
    /// before dropping the connection. The first close wins.
    public func close(_ reason: WebSocketCloseReason) {
        guard case .open = state, let context else { return }
        state = .closing
        context.writeAndFlush(wrapOutboundOut(WebSocketFrameBytes.close(reason, allocator: context.channel.allocator)), promise: nil)
        let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
        context.eventLoop.scheduleTask(in: Self.closeTimeout) {
            loopBound.value.close(promise: nil)
        }
    }

    // MARK: Channel events

    public func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        isWritable = context.channel.isWritable
        if context.channel.isActive { endpoint.opened(self) }
    }

    public func channelActive(context: ChannelHandlerContext) {
        endpoint.opened(self)
        context.fireChannelActive()
    }

    public func channelInactive(context: ChannelHandlerContext) {
        inflater = nil
        parser.reset()
        if case .closed = state {} else {
            state = .closed
            endpoint.closed()
        }
        context.fireChannelInactive()
    }

    public func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
        inflater = nil
    }

    public func channelWritabilityChanged(context: ChannelHandlerContext) {
        isWritable = context.channel.isWritable
        if isWritable { unread.reset() }
        context.fireChannelWritabilityChanged()
    }

    public func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is ChannelShouldQuiesceEvent {
            endpoint.shouldQuiesce()
        } else {
            context.fireUserInboundEventTriggered(event)
        }
    }

    public func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // A reset or a failed read: nothing can be sent any more.
        context.close(promise: nil)
    }

    public func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        parser.append(unwrapInboundIn(data))
        do {
            while let frame = try parser.next() {
                received(frame, context: context)
            }
        } catch {
            switch error {
            case .frameTooLarge:
                fail(WebSocketCloseReason(.messageTooLarge, "frame larger than the server accepts"))
            case .fragmentedControlFrame, .longControlFrame:
                fail(.protocolError("control frames must be final and at most 125 bytes"))
            }
        }
    }

    private func received(_ frame: WebSocketFrame, context: ChannelHandlerContext) {
        switch state {
        case .open:
            break
        case .closing:
            // Only the client's close matters now: it ends the handshake.
            if frame.opcode == .connectionClose { context.close(promise: nil) }
            return
        case .closed:
            return
        }
        guard !frame.rsv2, !frame.rsv3, !frame.rsv1 || deflate != nil else {
            return fail(.protocolError("reserved bits set, and no extension was negotiated"))
        }
        // RSV1 marks a compressed message on its first frame only, never on a control frame.
        guard !frame.rsv1 || frame.opcode == .text || frame.opcode == .binary else {
            return fail(.protocolError("RSV1 set on a frame that does not begin a message"))
        }
        guard frame.maskKey != nil else {
            return fail(.protocolError("client frames must be masked"))
        }
        switch frame.opcode {
        case .text, .binary, .continuation:
            do {
                var data = frame.unmaskedData
                let beginsMessage = frame.opcode != .continuation
                // A message begun in the middle of another is the assembler's to refuse.
                if !(beginsMessage && assembler.isInMessage) {
                    if beginsMessage { inflater = frame.rsv1 ? try makeInflater() : nil }
                    if let inflater { data = try inflater.inflate(data, final: frame.fin, allocator: context.channel.allocator) }
                }
                let message = try assembler.receive(frame.opcode, fin: frame.fin, data: data)
                if frame.fin { inflater = nil }
                if let message { endpoint.received(message) }
            } catch {
                inflater = nil
                fail(error)
            }
        case .ping:
            // Through `write`: a client that pings and never reads is as slow as any other.
            write(WebSocketFrameBytes.frame(.pong, frame.unmaskedData, allocator: context.channel.allocator))
            flush()
        case .pong:
            // Engine.IO keeps connections alive with its own packets; WebSocket pongs are allowed
            // unsolicited and mean nothing here.
            break
        case .connectionClose:
            receivedClose(frame.unmaskedData, context: context)
        default:
            fail(.protocolError("reserved opcode \(frame.opcode)"))
        }
    }

    private func makeInflater() throws(WebSocketCloseReason) -> PerMessageInflater {
        guard let inflater = PerMessageInflater(maxMessageSize: assembler.maxMessageSize) else {
            throw WebSocketCloseReason(.unexpectedServerError, "cannot decompress")
        }
        return inflater
    }

    // MARK: Closing

    /// The client closes: echo its code (RFC 6455 §5.5.1) unless the frame is invalid, then drop
    /// the connection once the echo is out.
    private func receivedClose(_ payload: ByteBuffer, context: ChannelHandlerContext) {
        var payload = payload
        let reply: WebSocketCloseReason
        switch payload.readableBytes {
        case 0:
            reply = WebSocketCloseReason(.normalClosure)
        case 1:
            reply = .protocolError("a close payload needs a 2-byte code")
        default:
            let code = payload.readWebSocketErrorCode()!
            if !Self.isValidCloseCode(code) {
                reply = .protocolError("invalid close code")
            } else if !Self.isUTF8(payload) {
                reply = .protocolError("close reason is not valid UTF-8")
            } else {
                reply = WebSocketCloseReason(code)
            }
        }
        fail(reply)
    }

    /// Codes a peer may send: the defined ones, and 3000–4999 for libraries and applications.
    private static func isValidCloseCode(_ code: WebSocketErrorCode) -> Bool {
        switch code {
        case .unknown(let value): return (3000...4999).contains(value)
        default: return true
        }
    }

    private static func isUTF8(_ text: ByteBuffer) -> Bool {
        var validator = UTF8Validator()
        return text.withUnsafeReadableBytes { validator.feed($0) } && validator.isAtCharacterBoundary
    }

    /// Sends a close frame and drops the connection as soon as it is written.
    private func fail(_ reason: WebSocketCloseReason) {
        guard case .open = state, let context else { return }
        state = .closing
        let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
        context.writeAndFlush(wrapOutboundOut(WebSocketFrameBytes.close(reason, allocator: context.channel.allocator))).whenComplete { _ in
            loopBound.value.close(promise: nil)
        }
    }
}

@available(*, unavailable)
extension WebSocketConnectionHandler: Sendable {}
