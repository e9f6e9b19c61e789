import Logging
package import NIOCore
package import NIOHPACK
import NIOHTTP2
import NIOPosix
import NIOSSL
import Synchronization

/// One HTTP/2 connection to a push service; every request is a stream of its own, so any number of sends
/// share it. It does not reconnect: ``HTTP2Connector`` replaces it once it is no longer usable.
package final class HTTP2Connection: Sendable {
    private let channel: any Channel
    private let multiplexer: NIOHTTP2Handler.AsyncStreamMultiplexer<Void>
    // Set on the event loop when GOAWAY arrives, read by the connector when it hands out the
    // connection: a single flag that never goes back, so an atomic says all there is to say.
    private let goingAway = Atomic<Bool>(false)

    private init(channel: any Channel, multiplexer: NIOHTTP2Handler.AsyncStreamMultiplexer<Void>) {
        self.channel = channel
        self.multiplexer = multiplexer
    }

    /// Opens a connection: TCP, then TLS with ALPN `h2` when `tlsContext` is given, then the
    /// HTTP/2 preface. Everything must be done by `deadline`.
    static func connect(
        to endpoint: HTTP2Endpoint,
        tlsContext: NIOSSLContext?,
        group: any EventLoopGroup,
        deadline: NIODeadline,
        logger: Logger
    ) async throws(HTTP2ClientError) -> HTTP2Connection {
        let remaining = deadline - .now()
        guard remaining > .zero else { throw HTTP2ClientError.timeout.with("no time left to connect to \(endpoint)") }
        let connection: HTTP2Connection
        let ready: EventLoopFuture<Void>
        do {
            (connection, ready) = try await ClientBootstrap(group: group)
                .channelOption(.tcpOption(.tcp_nodelay), value: 1)
                .connectTimeout(remaining)
                .connect(host: endpoint.host, port: endpoint.port) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try configure(channel, endpoint: endpoint, tlsContext: tlsContext, deadline: deadline, logger: logger)
                    }
                }
        } catch let error as ChannelError {
            if case .connectTimeout = error {
                throw HTTP2ClientError.timeout.with("connecting to \(endpoint) took too long", underlying: error)
            }
            throw HTTP2ClientError.connectionFailed.with("cannot connect to \(endpoint)", underlying: error)
        } catch {
            throw HTTP2ClientError.connectionFailed.with("cannot connect to \(endpoint)", underlying: error)
        }
        do {
            try await ready.get()
        } catch {
            await connection.close()
            throw error as? HTTP2ClientError ?? HTTP2ClientError.connectionFailed.with("cannot connect to \(endpoint)", underlying: error)
        }
        logger.debug("connected", metadata: ["http2.endpoint": "\(endpoint)"])
        return connection
    }

    /// Builds the pipeline; returns the connection and a future that completes when it may carry
    /// requests (at once for h2c, after the TLS handshake otherwise).
    private static func configure(
        _ channel: any Channel,
        endpoint: HTTP2Endpoint,
        tlsContext: NIOSSLContext?,
        deadline: NIODeadline,
        logger: Logger
    ) throws -> (HTTP2Connection, EventLoopFuture<Void>) {
        let pipeline = channel.pipeline.syncOperations
        var ready = channel.eventLoop.makeSucceededVoidFuture()
        if let tlsContext {
            // SNI takes a name, never an address.
            let isAddress = endpoint.host.contains(":") || endpoint.host.allSatisfy { $0.isNumber || $0 == "." }
            try pipeline.addHandler(NIOSSLClientHandler(context: tlsContext, serverHostname: isAddress ? nil : endpoint.host))
            let promise = channel.eventLoop.makePromise(of: Void.self)
            do {
                try pipeline.addHandler(HTTP2TLSHandshakeHandler(endpoint: endpoint, deadline: deadline, promise: promise))
            } catch {
                promise.fail(error)
                throw error
            }
            ready = promise.futureResult
        }
        var configuration = NIOHTTP2Handler.Configuration()
        // Push services never push to us; saying so up front means no inbound stream can ever appear.
        configuration.connection.initialSettings = nioDefaultSettings + [HTTP2Setting(parameter: .enablePush, value: 0)]
        let multiplexer = try pipeline.configureAsyncHTTP2Pipeline(mode: .client, configuration: configuration) { stream in
            stream.eventLoop.makeSucceededVoidFuture()
        }
        let connection = HTTP2Connection(channel: channel, multiplexer: multiplexer)
        try pipeline.addHandler(HTTP2GoAwayHandler { [weak connection] errorCode in
            connection?.goingAway.store(true, ordering: .relaxed)
            logger.debug("the server sent GOAWAY", metadata: ["http2.endpoint": "\(endpoint)", "http2.error": "\(errorCode)"])
        })
        return (connection, ready)
    }

    /// True while new requests may use this connection: open, and not told to go away.
    package var isUsable: Bool {
        channel.isActive && !goingAway.load(ordering: .relaxed)
    }

    /// Completes when the connection has closed.
    package var closeFuture: EventLoopFuture<Void> { channel.closeFuture }

    /// Sends one request on a new stream and waits for the answer until `deadline`.
    package func send(headers: HPACKHeaders, body: ByteBuffer, deadline: NIODeadline) async throws(HTTP2ClientError) -> HTTP2Response {
        let response: EventLoopFuture<HTTP2Response>
        do {
            response = try await multiplexer.openStream { stream in
                stream.eventLoop.makeCompletedFuture {
                    let promise = stream.eventLoop.makePromise(of: HTTP2Response.self)
                    do {
                        try stream.pipeline.syncOperations.addHandler(
                            HTTP2StreamHandler(headers: headers, body: body, deadline: deadline, promise: promise)
                        )
                    } catch {
                        promise.fail(error)
                        throw error
                    }
                    return promise.futureResult
                }
            }
        } catch {
            throw HTTP2ClientError.connectionClosed.with("cannot open a stream on the connection", underlying: error)
        }
        do {
            return try await response.get()
        } catch let error as HTTP2ClientError {
            throw error
        } catch {
            throw HTTP2ClientError.connectionClosed.with("the stream failed", underlying: error)
        }
    }

    /// Closes the connection; requests still in flight fail with ``HTTP2ClientError/connectionClosed``.
    package func close() async {
        try? await channel.close()
    }
}
