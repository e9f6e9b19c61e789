import NIOCore
import NIOHTTP1

/// Answers a request the HTTP parser refused, then closes the connection's output: `431
/// Request Header Fields Too Large` for headers over the parser's limit (NIO's, 80 KiB for all
/// header names and values together), `400 Bad Request` for anything else it cannot parse. Without
/// an answer the client waited for the idle timeout to learn nothing. (NIO's own
/// `HTTPServerProtocolErrorHandler` answers 400 to both.)
///
/// Sits right after the request decoder, like ``HTTPIdleTimeoutHandler``, and leaves with it when
/// the connection stops carrying HTTP.
final class HTTPParserErrorResponder: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    /// A response has begun and not ended: no other can be written in its middle.
    private var isResponding = false

    /// The status a refused request gets.
    static func status(for error: HTTPParserError) -> HTTPResponseStatus {
        error == .headerOverflow ? .requestHeaderFieldsTooLarge : .badRequest
    }

    /// Takes the handler out of `pipeline`, if it is there.
    static func remove(from pipeline: ChannelPipeline.SynchronousOperations) {
        if let handler = try? pipeline.handler(type: HTTPParserErrorResponder.self) { pipeline.removeHandler(handler, promise: nil) }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if let error = error as? HTTPParserError, !isResponding {
            // Output only: a full close with the rest of the request unread would reset the
            // connection, and the client could lose the answer. The client's close, or the idle
            // timeout, ends the connection.
            context.answerWithoutBody(Self.status(for: error), thenClose: .output)
        }
        context.fireErrorCaught(error)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(let head) where !head.isInformational: isResponding = true
        case .end: isResponding = false
        case .head, .body: break
        }
        context.write(data, promise: promise)
    }
}

@available(*, unavailable)
extension HTTPParserErrorResponder: Sendable {}

extension HTTPResponseHead {
    /// 1xx: a response that another follows.
    fileprivate var isInformational: Bool { status.code >= 100 && status.code < 200 }
}

extension ChannelHandlerContext {
    /// Writes an empty response with `Connection: close` through the HTTP encoder before this
    /// handler, then closes the connection (`mode`) once it is flushed: how the request-stage
    /// handlers refuse a request themselves.
    func answerWithoutBody(_ status: HTTPResponseStatus, thenClose mode: CloseMode) {
        let head = HTTPResponseHead(version: .http1_1, status: status, headers: ["Connection": "close", "Content-Length": "0"])
        write(NIOAny(HTTPServerResponsePart.head(head)), promise: nil)
        let bound = NIOLoopBound(self, eventLoop: eventLoop)
        writeAndFlush(NIOAny(HTTPServerResponsePart.end(nil))).whenComplete { _ in
            bound.value.close(mode: mode, promise: nil)
        }
    }
}
