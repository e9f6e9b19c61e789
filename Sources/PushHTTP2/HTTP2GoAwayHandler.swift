import NIOCore
import NIOHTTP2

/// Watches the connection's own frames (stream 0) for GOAWAY: push services send one before closing a
/// connection, and streams opened after it would fail, so the connection is retired at once.
final class HTTP2GoAwayHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTP2Frame

    private let onGoAway: @Sendable (HTTP2ErrorCode) -> Void

    init(onGoAway: @escaping @Sendable (HTTP2ErrorCode) -> Void) {
        self.onGoAway = onGoAway
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .goAway(_, let errorCode, _) = unwrapInboundIn(data).payload {
            onGoAway(errorCode)
        }
        context.fireChannelRead(data)
    }
}
