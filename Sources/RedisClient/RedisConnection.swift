public import NIOCore
import NIOPosix
import NIOSSL

/// One TCP connection to Redis, shared by any number of concurrent callers.
///
/// Commands are pipelined: each caller's bytes are written as soon as it asks, and replies are
/// matched to callers in order. A connection does not reconnect; ``RedisClient`` and
/// ``RedisSubscriber`` replace it when it closes.
public final class RedisConnection: Sendable {
    /// The endpoint this connection talks to.
    public let endpoint: RedisEndpoint
    private let channel: any Channel
    private let handler: NIOLoopBound<RedisChannelHandler>

    private init(endpoint: RedisEndpoint, channel: any Channel, handler: NIOLoopBound<RedisChannelHandler>) {
        self.endpoint = endpoint
        self.channel = channel
        self.handler = handler
    }

    /// Opens a connection, then logs in (`AUTH`), selects the database and names the client.
    /// - Parameters:
    ///   - configuration: endpoint, credentials and timeouts.
    ///   - eventLoop: the loop that will own the connection.
    ///   - onPush: for subscriber connections, receives every published message on `eventLoop`.
    public static func connect(
        configuration: RedisConfiguration,
        eventLoop: any EventLoop,
        onPush: (@Sendable (RedisPubSubMessage) -> Void)? = nil
    ) async throws(RedisError) -> RedisConnection {
        let endpoint = configuration.endpoint
        let tls = configuration.tls
        let connection: RedisConnection
        let secured: EventLoopFuture<Void>?
        do {
            (connection, secured) = try await ClientBootstrap(group: eventLoop)
                .channelOption(.tcpOption(.tcp_nodelay), value: 1)
                .channelOption(.socketOption(.so_keepalive), value: 1)
                .connectTimeout(TimeAmount(configuration.connectTimeout))
                .connect(host: endpoint.host, port: endpoint.port) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        let pipeline = channel.pipeline.syncOperations
                        var secured: EventLoopFuture<Void>?
                        if let tls {
                            let promise = channel.eventLoop.makePromise(of: Void.self)
                            secured = promise.futureResult
                            do {
                                try pipeline.addHandler(NIOSSLClientHandler(context: tls.context, serverHostname: tls.serverHostname(for: endpoint.host)))
                                try pipeline.addHandler(
                                    RedisTLSHandshakeHandler(
                                        endpoint: endpoint, tls: tls, deadline: .now() + TimeAmount(configuration.connectTimeout), promise: promise
                                    )
                                )
                            } catch {
                                promise.fail(error)
                                throw error
                            }
                        }
                        let handler = RedisChannelHandler(
                            allocator: channel.allocator,
                            endpointDescription: endpoint.description,
                            onPush: onPush
                        )
                        try pipeline.addHandler(handler)
                        let connection = RedisConnection(
                            endpoint: endpoint,
                            channel: channel,
                            handler: NIOLoopBound(handler, eventLoop: channel.eventLoop)
                        )
                        return (connection, secured)
                    }
                }
        } catch {
            throw RedisError(.connectionFailed, "cannot connect to \(endpoint)", underlying: error)
        }
        if let secured {
            do {
                try await secured.redisResult()
            } catch {
                await connection.close()
                throw error
            }
        }
        do {
            try await connection.handshake(configuration)
        } catch {
            await connection.close()
            // A server that refuses our certificate says so after the handshake (TLS 1.3): at the
            // first reply.
            let reason = tls.flatMap { tls in error.underlying.map { tls.explain($0, endpoint: endpoint) } }
            throw RedisError(.connectionFailed, reason ?? "\(endpoint) refused the handshake: \(error.message)", underlying: error)
        }
        return connection
    }

    private func handshake(_ configuration: RedisConfiguration) async throws(RedisError) {
        var commands: [RedisCommand] = []
        if let password = endpoint.password {
            if let username = endpoint.username {
                commands.append(RedisCommand("AUTH", username, password))
            } else {
                commands.append(RedisCommand("AUTH", password))
            }
        }
        if endpoint.database != 0 {
            commands.append(RedisCommand("SELECT", endpoint.database))
        }
        if let name = configuration.clientName {
            commands.append(RedisCommand("CLIENT", "SETNAME", name))
        }
        // Over TLS, one round trip at least: a server refusing the client's certificate answers
        // the first request with an alert, and that must fail the connect, not a caller's command.
        if commands.isEmpty, configuration.tls != nil {
            commands.append(RedisCommand("PING"))
        }
        guard !commands.isEmpty else { return }
        let deadline = NIODeadline.now() + TimeAmount(configuration.connectTimeout)
        for reply in try await pipeline(commands, deadline: deadline) {
            if case .error(let message) = reply { throw RedisError(.reply, message) }
        }
    }

    /// True until the connection closes.
    public var isActive: Bool { channel.isActive }

    /// Completes when the connection has closed, for whatever reason.
    public var closeFuture: EventLoopFuture<Void> { channel.closeFuture }

    /// The event loop that owns this connection.
    public var eventLoop: any EventLoop { channel.eventLoop }

    /// Sends one command and waits for its reply.
    ///
    /// An error reply is thrown as ``RedisError/Code/reply`` with Redis's message.
    public func send(_ command: RedisCommand, deadline: NIODeadline) async throws(RedisError) -> RedisReply {
        let promise = channel.eventLoop.makePromise(of: RedisReply.self)
        submit(RedisRequest(name: command.name, bytes: command.encoded, replyCount: 1, deadline: deadline, completion: .single(promise)))
        let reply = try await promise.futureResult.redisResult()
        if case .error(let message) = reply { throw RedisError(.reply, message) }
        return reply
    }

    /// Sends one command, after `ASKING` when `asking` (a cluster's redirection during a slot's
    /// migration), and followed by `WAIT` when `durability` asks replicas to confirm it: all in
    /// one write, on this connection, so that `WAIT` covers this very write.
    /// - Throws: ``RedisError/Code/reply`` for the command's error reply;
    ///   ``RedisError/Code/notReplicated`` when fewer replicas than asked confirmed it in time.
    func send(_ command: RedisCommand, asking: Bool, durability: RedisWriteDurability, deadline: NIODeadline) async throws(RedisError) -> RedisReply {
        let wait = durability.waitArguments
        guard asking || wait != nil else { return try await send(command, deadline: deadline) }
        var commands = asking ? [RedisCommand("ASKING"), command] : [command]
        if let wait { commands.append(RedisCommand("WAIT", wait.replicas, wait.milliseconds)) }
        let replies = try await pipeline(commands, deadline: deadline)
        let reply = replies[asking ? 1 : 0]
        if case .error(let message) = reply { throw RedisError(.reply, message) }
        if let wait {
            guard case .integer(let confirmed) = replies[replies.count - 1] else {
                throw .unexpected(replies[replies.count - 1], expected: "WAIT's count of replicas")
            }
            guard confirmed >= wait.replicas else {
                throw RedisError(
                    .notReplicated,
                    "\(endpoint) applied \(command.name), but \(confirmed) of the \(wait.replicas) replicas asked for confirmed it within \(wait.milliseconds) ms"
                )
            }
        }
        return reply
    }

    /// Sends several commands in one write and returns their replies in order.
    ///
    /// Error replies stay in the array as ``RedisReply/error(_:)``: one failed command does not
    /// hide the others' results.
    public func pipeline(_ commands: [RedisCommand], deadline: NIODeadline) async throws(RedisError) -> [RedisReply] {
        guard let first = commands.first else { return [] }
        var bytes = channel.allocator.buffer(capacity: commands.reduce(0) { $0 + $1.encoded.readableBytes })
        for command in commands {
            bytes.writeImmutableBuffer(command.encoded)
        }
        return try await request(name: first.name, bytes: bytes, replyCount: commands.count, deadline: deadline)
    }

    /// Writes raw command bytes that produce `replyCount` replies (as `SUBSCRIBE a b` does).
    func request(name: String, bytes: ByteBuffer, replyCount: Int, deadline: NIODeadline) async throws(RedisError) -> [RedisReply] {
        try await submit(name: name, bytes: bytes, replyCount: replyCount, deadline: deadline).redisResult()
    }

    /// Submits raw command bytes without suspending, so that a caller holding a lock fixes the
    /// order in which its writes reach Redis.
    func submit(name: String, bytes: ByteBuffer, replyCount: Int, deadline: NIODeadline) -> EventLoopFuture<[RedisReply]> {
        let promise = channel.eventLoop.makePromise(of: [RedisReply].self)
        submit(RedisRequest(name: name, bytes: bytes, replyCount: replyCount, deadline: deadline, completion: .batch(promise)))
        return promise.futureResult
    }

    private func submit(_ request: RedisRequest) {
        if channel.eventLoop.inEventLoop {
            handler.value.enqueue(request)
        } else {
            let handler = self.handler
            channel.eventLoop.execute { handler.value.enqueue(request) }
        }
    }

    /// Closes the connection; requests still in flight fail with ``RedisError/Code/connectionClosed``.
    public func close() async {
        try? await channel.close()
    }

    /// Starts closing without waiting, for callers that cannot suspend.
    func closeSoon() {
        channel.close(promise: nil)
    }
}

extension EventLoopFuture where Value: Sendable {
    /// Awaits the future, keeping ``RedisError`` typed.
    func redisResult() async throws(RedisError) -> Value {
        do {
            return try await get()
        } catch let error as RedisError {
            throw error
        } catch {
            throw RedisError(.connectionClosed, "request failed", underlying: error)
        }
    }
}

extension TimeAmount {
    init(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        self = .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }
}
