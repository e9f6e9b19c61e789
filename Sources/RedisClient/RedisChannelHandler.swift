import NIOCore

/// The pipeline end of one Redis connection: writes requests, parses replies with hiredis and
/// completes requests in order (Redis answers in the order it was asked).
///
/// Every command has a deadline. A reply cannot be skipped in RESP, so when the oldest request
/// passes its deadline the connection is useless: all requests fail and the channel closes.
final class RedisChannelHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer


    private enum State {
        case idle
        case active(ChannelHandlerContext)
        case closed(RedisError)
    }

    private let reader: RESPReader
    private let endpointDescription: String
    /// Set on subscriber connections: push messages go here instead of to a request.
    private let onPush: (@Sendable (RedisPubSubMessage) -> Void)?
    private var state: State = .idle
    private var pending = CircularBuffer<RedisRequest>(initialCapacity: 16)
    /// Replies received so far for the oldest request, when it is a batch (a pipeline). Kept
    /// outside `pending`: appending to an array held in the buffer copied it on every reply
    /// (the buffer's subscript has no in-place access), quadratic in the pipeline's length.
    private var batch: [RedisReply] = []
    private var timeoutTask: Scheduled<Void>?
    /// When `timeoutTask` fires.
    private var timeoutDeadline: NIODeadline = .distantFuture
    private var flushScheduled = false

    init(
        allocator: ByteBufferAllocator,
        endpointDescription: String,
        onPush: (@Sendable (RedisPubSubMessage) -> Void)? = nil
    ) {
        self.reader = RESPReader(allocator: allocator)
        self.endpointDescription = endpointDescription
        self.onPush = onPush
    }

    // MARK: Requests

    /// Writes a request; its replies complete it. Must be called on the channel's event loop.
    func enqueue(_ request: RedisRequest) {
        guard case .active(let context) = state else {
            if case .closed(let error) = state {
                request.fail(error)
            } else {
                request.fail(RedisError(.connectionClosed, "connection to \(endpointDescription) is not open"))
            }
            return
        }
        pending.append(request)
        context.write(wrapOutboundOut(request.bytes), promise: nil)
        scheduleFlush(context)
        scheduleTimeout(context)
    }

    /// Many callers write in the same event-loop tick; one flush (one syscall) serves them all.
    private func scheduleFlush(_ context: ChannelHandlerContext) {
        guard !flushScheduled else { return }
        flushScheduled = true
        context.eventLoop.assumeIsolated().execute {
            self.flushScheduled = false
            if case .active = self.state { context.flush() }
        }
    }

    /// One timer watches the oldest request; it re-arms for the next one when it fires early, and
    /// moves earlier when the oldest request is due before it (requests may have shorter timeouts).
    private func scheduleTimeout(_ context: ChannelHandlerContext) {
        guard let oldest = pending.first else { return }
        if let timeoutTask {
            guard oldest.deadline < timeoutDeadline else { return }
            timeoutTask.cancel()
        }
        timeoutDeadline = oldest.deadline
        timeoutTask = context.eventLoop.assumeIsolated().scheduleTask(deadline: oldest.deadline) {
            self.timeoutTask = nil
            guard let oldest = self.pending.first else { return }
            // The loop's clock, not `NIODeadline.now()`: they differ on an `EmbeddedEventLoop`.
            if oldest.deadline <= context.eventLoop.now {
                self.close(
                    context,
                    RedisError(.timeout, "no reply to \(oldest.name) from \(self.endpointDescription) in time")
                )
            } else {
                self.scheduleTimeout(context)
            }
        }
    }

    // MARK: Channel events

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { state = .active(context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        if case .idle = state { state = .active(context) }
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        do {
            try reader.feed(unwrapInboundIn(data))
            while let reply = try reader.next() {
                try dispatch(reply)
            }
        } catch {
            close(context, error)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        failAll(RedisError(.connectionClosed, "connection to \(endpointDescription) closed"))
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        close(context, RedisError(.connectionClosed, "connection to \(endpointDescription) failed", underlying: error))
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        failAll(RedisError(.connectionClosed, "connection to \(endpointDescription) closed"))
    }

    // MARK: Replies

    private func dispatch(_ reply: RedisReply) throws(RedisError) {
        if let onPush, case .array(let elements) = reply {
            if let message = RedisPubSubMessage(pushReply: elements) {
                onPush(message)
                return
            }
            // A cluster node whose slot moved away unsubscribes that slot's sharded channels by
            // itself: the subscriber must start over where the slot lives now.
            if elements.first?.string == "sunsubscribe", pending.first?.name != "SUNSUBSCRIBE" {
                throw RedisError(.connectionClosed, "\(endpointDescription) unsubscribed \(elements.dropFirst().first?.string ?? "a channel") (its slot moved)")
            }
        }
        guard !pending.isEmpty else {
            throw RedisError(.protocolError, "\(endpointDescription) sent a reply nobody asked for: \(reply)")
        }
        let oldest = pending[pending.startIndex]
        switch oldest.completion {
        case .single(let promise):
            pending.removeFirst()
            promise.succeed(reply)
        case .batch(let promise):
            if batch.isEmpty { batch.reserveCapacity(oldest.replyCount) }
            batch.append(reply)
            guard batch.count == oldest.replyCount else { return }
            pending.removeFirst()
            let replies = batch
            batch = []
            promise.succeed(replies)
        }
        // The next request may be due before the timer armed for the one just answered.
        if case .active(let context) = state { scheduleTimeout(context) }
    }

    private func close(_ context: ChannelHandlerContext, _ error: RedisError) {
        failAll(error)
        context.close(promise: nil)
    }

    private func failAll(_ error: RedisError) {
        if case .closed = state { return }
        state = .closed(error)
        timeoutTask?.cancel()
        timeoutTask = nil
        batch = []
        while let request = pending.popFirst() {
            request.fail(error)
        }
    }
}
