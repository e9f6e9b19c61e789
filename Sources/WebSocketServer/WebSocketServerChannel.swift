public import HummingbirdCore
public import NIOHTTPTypes
public import Logging
public import NIOCore
import NIOHTTP1
import NIOHTTPTypesHTTP1

/// A node's HTTP/1.1 connections: requests go to Hummingbird's responder, and the upgrades its
/// ``WebSocketRoute`` accepts go to a plain NIO WebSocket pipeline
/// (``WebSocketConnectionHandler``).
public struct WebSocketServerChannel: ServerChildChannel, HTTPChannelHandler {
    /// What a connection became once its first request was read.
    public enum UpgradeResult: Sendable {
        /// A WebSocket connection: its handler runs it from here, with no task of its own.
        case upgraded
        case notUpgraded(NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>)
    }

    public struct Value: ServerChildChannelValue {
        let upgradeResult: EventLoopFuture<UpgradeResult>
        public let channel: any Channel
    }

    public let responder: Responder
    let limits: WebSocketLimits
    let route: WebSocketRoute
    /// Makes the handler that sees each request before the upgrade handler; `nil` for none.
    let interceptor: RequestInterceptor?
    /// How long a connection may wait for a whole request (see ``HTTPIdleTimeoutHandler``).
    let idleTimeout: TimeAmount
    /// Refuses a connection over its address's limit; `nil`: no limit.
    let connectionsPerAddress: ConnectionsPerAddress?

    /// Makes a handler that sees every request of a connection (as `HTTPServerRequestPart`s)
    /// before the upgrade handler does, and may answer it itself (the gateway passes requests of
    /// sessions other nodes hold on to them). It leaves the pipeline when the connection becomes
    /// a WebSocket. A connection's first request that the route accepts as a WebSocket handshake
    /// is upgraded without it (``WebSocketHandshakeHandler``): it must take only requests the route
    /// declines.
    public typealias RequestInterceptor = @Sendable () -> any RemovableChannelHandler

    /// The pipeline name of a connection's ``RequestInterceptor`` handler.
    static let interceptorName = "WebSocketServerChannel.interceptor"

    /// A server builder for `Application(server:)`.
    /// - Parameters:
    ///   - interceptor: makes a connection's handler that sees each request first.
    ///   - idleTimeout: how long a connection may go without a whole request in flight: from its
    ///     opening or its last response to the end of its next request.
    ///   - connectionsPerAddress: closes a connection over its address's limit as it is accepted.
    public static func builder(
        limits: WebSocketLimits,
        interceptor: RequestInterceptor? = nil,
        idleTimeout: TimeAmount = .seconds(30),
        connectionsPerAddress: ConnectionsPerAddress? = nil,
        route: @escaping WebSocketRoute
    ) -> HTTPServerBuilder {
        HTTPServerBuilder { responder in
            WebSocketServerChannel(
                responder: responder, limits: limits, route: route, interceptor: interceptor, idleTimeout: idleTimeout,
                connectionsPerAddress: connectionsPerAddress
            )
        }
    }

    /// A channel keeps the buffers it read into for reuse (NIO's pool, up to one per read of a
    /// loop turn) and never shrinks them, and most connections here idle, so what they keep is
    /// memory per connection: buffers start at 512 bytes (NIO's default is 2 KiB) and grow to
    /// 8 KiB at most (NIO's default 64 KiB), so a client that once sent a large message holds
    /// 8 KiB per buffer, not 64. A larger message takes more reads.
    static let receiveBuffers = AdaptiveRecvByteBufferAllocator(minimum: 64, initial: 512, maximum: 8192)

    public func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        if let connectionsPerAddress, case .peer = connectionsPerAddress.source, !connectionsPerAddress.admit(channel) {
            channel.close(promise: nil)
            return channel.eventLoop.makeSucceededFuture(
                Value(upgradeResult: channel.eventLoop.makeFailedFuture(OverAddressLimit()), channel: channel)
            )
        }
        return channel.eventLoop.makeCompletedFuture {
            try channel.syncOptions?.setOption(.recvAllocator, value: Self.receiveBuffers)
            let result = channel.eventLoop.makePromise(of: UpgradeResult.self)
            try channel.pipeline.syncOperations.addHandler(WebSocketHandshakeHandler(server: self, result: result, logger: logger))
            return Value(upgradeResult: result.futureResult, channel: channel)
        }
    }

    /// Sets up the HTTP/1.1 pipeline of a connection whose first request is not a WebSocket
    /// handshake ``WebSocketHandshakeHandler`` takes: NIO's parser and upgrade handler, the
    /// request-stage handlers, and Hummingbird's handlers once no upgrade is made.
    /// - Parameter requestDeadline: when the first request must have arrived whole.
    func addHTTPHandlers(to channel: any Channel, logger: Logger, requestDeadline: NIODeadline?) throws -> EventLoopFuture<UpgradeResult> {
        let upgrader = WebSocketUpgrader(limits: limits, route: route, eventLoop: channel.eventLoop)
        let upgrade = NIOTypedHTTPServerUpgradeConfiguration<UpgradeResult>(
            upgraders: [upgrader],
            notUpgradingCompletionHandler: { [route, limits] channel in
                channel.eventLoop.makeCompletedFuture {
                    // Behind NIO's upgrade handler, which passes it the first request.
                    try channel.pipeline.syncOperations.addHandler(KeepAliveUpgradeHandler(route: route, limits: limits))
                    try channel.pipeline.syncOperations.addHandler(HTTP1ToHTTPServerCodec(secure: false))
                    try channel.pipeline.syncOperations.addHandler(HTTPConnectionStateHandler(idleTimeout: nil, logger: logger))
                    let http = try NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>(
                        wrappingChannelSynchronously: channel,
                        configuration: .init(isOutboundHalfClosureEnabled: true)
                    )
                    return .notUpgraded(http)
                }
            }
        )
        var configuration = NIOUpgradableHTTPServerPipelineConfiguration(upgradeConfiguration: upgrade)
        // Hummingbird pipelines requests and handles HTTP errors and header validation itself.
        configuration.enablePipelining = false
        configuration.enableErrorHandling = false
        configuration.enableResponseHeaderValidation = false
        let sync = channel.pipeline.syncOperations
        let result = try sync.configureUpgradableHTTPServerPipeline(configuration: configuration)
        let decoder = try sync.handler(type: ByteToMessageHandler<HTTPRequestDecoder>.self)
        try sync.addHandler(HTTPIdleTimeoutHandler(timeout: idleTimeout, firstDeadline: requestDeadline), position: .after(decoder))
        if let interceptor {
            // Before the upgrade handler: an upgrade it takes is not ours to answer.
            try sync.addHandler(interceptor(), name: Self.interceptorName, position: .after(decoder))
        }
        if let connectionsPerAddress, case .firstRequest(let address) = connectionsPerAddress.source {
            try sync.addHandler(FirstRequestAdmission(connections: connectionsPerAddress, address: address), position: .after(decoder))
        }
        // Right after the decoder, which reports its errors to the next handler first.
        try sync.addHandler(HTTPParserErrorResponder(), position: .after(decoder))
        return result
    }

    /// Whether a connection whose addresses are counted by its first request
    /// (``ConnectionsPerAddress/Source/firstRequest(_:)``) is admitted with `head`; counted if so.
    func admitsFirstRequest(_ head: HTTPRequestHead, on channel: any Channel) -> Bool {
        guard let connectionsPerAddress, case .firstRequest(let address) = connectionsPerAddress.source else { return true }
        return connectionsPerAddress.admit(channel, as: address(head))
    }

    public func handle(value: Value, logger: Logger) async {
        do {
            // A connection still waiting for its first request has no task of Hummingbird's to
            // cancel: past the drain deadline it is closed here.
            let result = try await withTaskCancellationHandler {
                try await value.upgradeResult.get()
            } onCancel: {
                value.channel.close(promise: nil)
            }
            switch result {
            case .upgraded:
                break
            case .notUpgraded(let http):
                await handleHTTP(asyncChannel: http, logger: logger)
            }
        } catch {
            logger.debug("connection ended before its first request", metadata: ["error": "\(error)"])
        }
    }
}

extension ChannelPipeline.SynchronousOperations {
    /// Removes the handlers that serve HTTP requests only (the idle timeout, the parser error
    /// answer and the interceptor): the connection is becoming a WebSocket.
    func removeRequestStageHandlers() {
        if let interceptor = try? context(name: WebSocketServerChannel.interceptorName) { removeHandler(context: interceptor, promise: nil) }
        HTTPIdleTimeoutHandler.remove(from: self)
        HTTPParserErrorResponder.remove(from: self)
    }
}

extension ChannelPipeline.SynchronousOperations {
    /// Takes out the server's HTTP response encoder, its upgrade handler, its idle timeout and its
    /// parser error answer:
    /// for a ``WebSocketServerChannel/RequestInterceptor`` that takes the connection over
    /// (relaying it to another server) and writes raw bytes from here on.
    public func detachHTTPServerHandlers() {
        if let encoder = try? handler(type: HTTPResponseEncoder.self) { removeHandler(encoder, promise: nil) }
        if let upgrader = try? handler(type: NIOTypedHTTPServerUpgradeHandler<WebSocketServerChannel.UpgradeResult>.self) {
            removeHandler(upgrader, promise: nil)
        }
        HTTPIdleTimeoutHandler.remove(from: self)
        HTTPParserErrorResponder.remove(from: self)
    }
}

/// A connection closed as it was accepted: its address held as many as it may.
private struct OverAddressLimit: Error, CustomStringConvertible {
    var description: String { "too many connections from this address" }
}
