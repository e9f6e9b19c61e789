import NIOCore
import NIOHTTP1
import NIOPosix
import RoomcastCore
import WebSocketServer

/// Passes a request of an Engine.IO session that another node holds on to that node, and that
/// node's answer back, byte for byte (see ``SessionForwarding``).
///
/// Sits right after the HTTP request decoder and looks at each request head; requests of this
/// node's sessions (and all others) go on to the server unchanged. A forwarded poll or send
/// goes out with `Connection: close`, and the client connection closes with the owner's answer,
/// so no later request on it can reach the wrong node; that answer says `Connection: close` to
/// the client (a proxy that kept the connection for another request would lose it: nginx never
/// retries a POST). A forwarded WebSocket upgrade turns the connection into a byte relay for as
/// long as both sides keep it open.
final class ForwardingHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundOut = ByteBuffer

    private enum State {
        /// Requests are served by this node.
        case serving
        /// Passing a request on: its bytes so far wait for the connection to the owner.
        case connecting(pending: ByteBuffer)
        case relaying(peer: any Channel)
        case closed
    }

    private struct Request {
        let isUpgrade: Bool
        let isChunked: Bool
        var bodySize = 0
        var isComplete = false
    }

    private let forwarding: SessionForwarding
    private var state = State.serving
    private var request: Request?
    /// For a forwarded poll or send: the start of the owner's answer, held until its status line
    /// is complete, after which `Connection: close` is added; nil once passed on (or for an
    /// upgrade, relayed as it is).
    private var answerStart: ByteBuffer?
    private var context: ChannelHandlerContext?

    init(forwarding: SessionForwarding) {
        self.forwarding = forwarding
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let part = unwrapInboundIn(data)
        switch state {
        case .serving:
            guard case .head(let head) = part, let owner = ownerToForward(head) else {
                return context.fireChannelRead(data)
            }
            startForwarding(head, to: owner, context: context)
        case .connecting, .relaying:
            forward(part, context: context)
        case .closed:
            break
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        if case .relaying(let peer) = state { peer.close(promise: nil) }
        if case .serving = state {} else { state = .closed }
        context.fireChannelInactive()
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        // The owner's bytes are read only as fast as the client takes them.
        if case .relaying(let peer) = state {
            peer.setOption(ChannelOptions.autoRead, value: context.channel.isWritable).whenComplete { _ in }
        }
        context.fireChannelWritabilityChanged()
    }

    // MARK: Client to owner

    /// The node to forward a request to, or `nil` to serve it here.
    private func ownerToForward(_ head: HTTPRequestHead) -> NodeID? {
        guard !head.headers.contains(name: SessionForwarding.forwardedHeader),
            let owner = forwarding.owner(head), owner != forwarding.nodeID
        else { return nil }
        return owner
    }

    private func startForwarding(_ head: HTTPRequestHead, to owner: NodeID, context: ChannelHandlerContext) {
        let isUpgrade = head.headers[canonicalForm: "upgrade"].contains { $0.lowercased() == "websocket" }
        let isChunked = head.headers[canonicalForm: "transfer-encoding"].contains { $0.lowercased() == "chunked" }
        if let length = head.headers.first(name: "content-length").flatMap(Int.init), length > forwarding.maxBodySize {
            return refuse(.payloadTooLarge, context: context)
        }
        request = Request(isUpgrade: isUpgrade, isChunked: isChunked)
        answerStart = isUpgrade ? nil : context.channel.allocator.buffer(capacity: 0)
        detachHTTPServer(context: context)
        var pending = context.channel.allocator.buffer(capacity: 512)
        Self.writeHead(head, isUpgrade: isUpgrade, forwardedBy: forwarding.nodeID, into: &pending)
        state = .connecting(pending: pending)

        let forwarding = self.forwarding
        let loop = context.eventLoop
        let handler = NIOLoopBound(self, eventLoop: loop)
        loop.makeFutureWithTask { await forwarding.locate(owner) }
            .flatMap { address -> EventLoopFuture<any Channel> in
                guard let address else { return loop.makeFailedFuture(OwnerGone(node: owner)) }
                return ClientBootstrap(group: loop)
                    .channelOption(.tcpOption(.tcp_nodelay), value: 1)
                    .connectTimeout(.seconds(5))
                    .channelInitializer { peer in
                        peer.eventLoop.makeCompletedFuture {
                            try peer.pipeline.syncOperations.addHandler(OwnerRelayHandler(client: handler))
                        }
                    }
                    .connect(to: address)
            }
            .whenComplete { result in handler.value.connected(result) }
    }

    /// The owner's connection is up (or could not be made): sends what waited.
    private func connected(_ result: Result<any Channel, any Error>) {
        guard let context, case .connecting(let pending) = state else {
            // The client left meanwhile.
            if case .success(let peer) = result { peer.close(promise: nil) }
            return
        }
        switch result {
        case .failure:
            // The node holding the session is gone, and the session with it: the client starts over.
            refuse(.sessionUnknown, context: context)
        case .success(let peer):
            state = .relaying(peer: peer)
            peer.writeAndFlush(pending, promise: nil)
            if request?.isUpgrade == true, request?.isComplete == true { relayRawBytes(context: context, to: peer) }
        }
    }

    private func forward(_ part: HTTPServerRequestPart, context: ChannelHandlerContext) {
        guard var request else { return }
        var bytes = context.channel.allocator.buffer(capacity: 0)
        switch part {
        case .head:
            // A second request before the first was answered: it is not passed on.
            return
        case .body(let body):
            request.bodySize += body.readableBytes
            guard request.bodySize <= forwarding.maxBodySize else { return refuse(.payloadTooLarge, context: context) }
            if request.isChunked {
                bytes.writeString(String(body.readableBytes, radix: 16) + "\r\n")
                bytes.writeImmutableBuffer(body)
                bytes.writeString("\r\n")
            } else {
                bytes = body
            }
        case .end:
            request.isComplete = true
            if request.isChunked { bytes.writeString("0\r\n\r\n") }
        }
        self.request = request
        switch state {
        case .connecting(var pending):
            pending.writeImmutableBuffer(bytes)
            state = .connecting(pending: pending)
        case .relaying(let peer):
            if bytes.readableBytes > 0 { peer.writeAndFlush(bytes, promise: nil) }
            if request.isUpgrade, request.isComplete { relayRawBytes(context: context, to: peer) }
        case .serving, .closed:
            break
        }
    }

    /// After a forwarded upgrade: whatever the client sends is WebSocket frames for the owner.
    private func relayRawBytes(context: ChannelHandlerContext, to peer: any Channel) {
        let sync = context.pipeline.syncOperations
        guard let decoder = try? sync.handler(type: ByteToMessageHandler<HTTPRequestDecoder>.self) else { return }
        do {
            try sync.addHandler(ClientRelayHandler(peer: peer), position: .after(decoder))
            sync.removeHandler(decoder, promise: nil)
        } catch {
            context.close(promise: nil)
        }
    }

    // MARK: Owner to client

    fileprivate func receivedFromOwner(_ bytes: ByteBuffer) {
        guard let context else { return }
        guard var start = answerStart else {
            context.write(wrapOutboundOut(bytes), promise: nil)
            return
        }
        start.writeImmutableBuffer(bytes)
        guard let lineEnd = Self.endOfFirstLine(start) else {
            // A status line is a few dozen bytes: an owner sending kilobytes without one is broken.
            guard start.readableBytes <= Self.maximumStatusLine else { return ownerClosed() }
            answerStart = start
            return
        }
        answerStart = nil
        var amended = start.readSlice(length: lineEnd)!
        amended.writeStaticString("Connection: close\r\n")
        amended.writeImmutableBuffer(start)
        context.write(wrapOutboundOut(amended), promise: nil)
    }

    /// The longest status line waited for.
    static let maximumStatusLine = 8192

    /// How many bytes the first line of `buffer` takes, its CRLF included; nil before its CRLF.
    static func endOfFirstLine(_ buffer: ByteBuffer) -> Int? {
        let view = buffer.readableBytesView
        guard let newline = view.firstIndex(of: UInt8(ascii: "\n")) else { return nil }
        return newline - view.startIndex + 1
    }

    fileprivate func ownerReadComplete() {
        context?.flush()
    }

    fileprivate func ownerClosed() {
        guard let context else { return }
        state = .closed
        context.close(promise: nil)
    }

    // MARK: Helpers

    /// From here on this handler writes raw bytes: the response encoder and the upgrade handler
    /// (which would wait for a request that never comes) leave the pipeline.
    private func detachHTTPServer(context: ChannelHandlerContext) {
        // The owner's answer ends the connection (or it relays WebSocket frames): no HTTP clock.
        context.pipeline.syncOperations.detachHTTPServerHandlers()
    }

    /// How long a refused client may go on sending before its connection closes.
    static let lingerTimeout: TimeAmount = .seconds(2)

    private enum Refusal {
        case sessionUnknown
        case payloadTooLarge
    }

    /// Answers the client here, as the Engine.IO server would, and closes.
    private func refuse(_ refusal: Refusal, context: ChannelHandlerContext) {
        if case .relaying(let peer) = state { peer.close(promise: nil) }
        if case .serving = state { detachHTTPServer(context: context) }
        state = .closed
        let (status, body) =
            switch refusal {
            case .sessionUnknown: ("400 Bad Request", #"{"code":1,"message":"Session ID unknown"}"#)
            case .payloadTooLarge: ("413 Payload Too Large", #"{"code":3,"message":"Payload too large"}"#)
            }
        var response = context.channel.allocator.buffer(capacity: 160)
        response.writeString(
            "HTTP/1.1 \(status)\r\ncontent-type: application/json\r\ncontent-length: \(body.utf8.count)\r\nconnection: close\r\n\r\n\(body)"
        )
        // A lingering close: the answer and a FIN, then what the client still sends (the body of
        // a refused request) is read and dropped for a moment, so it gets the answer instead of
        // a reset in the middle of its upload.
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(response)).whenComplete { _ in
            channel.close(mode: .output, promise: nil)
            channel.eventLoop.scheduleTask(in: Self.lingerTimeout) { channel.close(promise: nil) }
        }
    }

    /// The request line and headers as the owner gets them: marked as forwarded, and closing the
    /// connection after the answer unless it is an upgrade.
    static func writeHead(_ head: HTTPRequestHead, isUpgrade: Bool, forwardedBy node: NodeID, into buffer: inout ByteBuffer) {
        buffer.writeString("\(head.method.rawValue) \(head.uri) HTTP/1.1\r\n")
        for (name, value) in head.headers {
            if !isUpgrade, name.lowercased() == "connection" || name.lowercased() == "keep-alive" { continue }
            buffer.writeString("\(name): \(value)\r\n")
        }
        if !isUpgrade { buffer.writeString("Connection: close\r\n") }
        buffer.writeString("\(SessionForwarding.forwardedHeader): \(node)\r\n\r\n")
    }
}

@available(*, unavailable)
extension ForwardingHandler: Sendable {}

/// On a forwarded WebSocket connection: the client's bytes, passed on to the owner node.
private final class ClientRelayHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    private let peer: any Channel

    init(peer: any Channel) {
        self.peer = peer
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        peer.write(unwrapInboundIn(data), promise: nil)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        peer.flush()
    }
}

/// The connection to the owner node: its answer goes back to the client.
private final class OwnerRelayHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    private let client: NIOLoopBound<ForwardingHandler>

    init(client: NIOLoopBound<ForwardingHandler>) {
        self.client = client
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        client.value.receivedFromOwner(unwrapInboundIn(data))
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        client.value.ownerReadComplete()
    }

    func channelInactive(context: ChannelHandlerContext) {
        client.value.ownerClosed()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}

/// The node holding a session is not in the registry any more: its sessions went with it.
private struct OwnerGone: Error, CustomStringConvertible {
    let node: NodeID
    var description: String { "node \(node) holding the session is not registered" }
}
