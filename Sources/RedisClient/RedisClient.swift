public import Logging
public import NIOCore
public import NIOPosix
public import ServiceLifecycle
import Synchronization

/// A pooled, self-healing Redis client.
///
/// `run()` (a swift-service-lifecycle `Service`) keeps `poolSize` connections open, reconnecting
/// with backoff; commands from any number of tasks are pipelined over them. Every command has a
/// deadline covering both the wait for a connection and the reply, so no caller hangs on a dead
/// Redis.
///
/// In cluster mode (``RedisConfiguration/Mode/cluster(seeds:)``) the client reads the slot map,
/// keeps such a pool per master and sends each command to the master of its keys' slot,
/// following `MOVED` and `ASK`; the API is the same.
public final class RedisClient: Service, Sendable {
    private typealias Pool = ConnectionPoolStateMachine<RedisConnection, EventLoopPromise<RedisConnection>>

    /// The configuration the client was created with.
    public let configuration: RedisConfiguration
    private let eventLoopGroup: any EventLoopGroup
    private let logger: Logger
    // A mutex, not an actor: a lease is a few instructions and must not cost a task hop per command.
    private let pool: Mutex<Pool>
    private let metrics: RedisCommandMetrics
    /// Set in cluster mode: the slot map and the masters' pools.
    let router: ClusterRouter?

    /// Creates a client; it connects once `run()` is running.
    public init(
        configuration: RedisConfiguration,
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        logger: Logger = Logger(label: "redis")
    ) {
        self.configuration = configuration
        self.eventLoopGroup = eventLoopGroup
        self.logger = logger
        self.pool = Mutex(Pool(size: max(configuration.poolSize, 1)))
        self.metrics = RedisCommandMetrics(prefix: configuration.metricsPrefix)
        if case .cluster(let seeds) = configuration.mode {
            router = ClusterRouter(configuration: configuration, seeds: seeds, eventLoopGroup: eventLoopGroup, logger: logger)
        } else {
            router = nil
        }
    }

    /// Keeps the pool connected until the task is cancelled or a graceful shutdown is requested.
    public func run() async {
        // Cancellation, not a graceful-shutdown flag, stops the slots: they may be sleeping in a
        // backoff or waiting on a connection, and both end promptly when cancelled.
        await cancelWhenGracefulShutdown {
            if let router = self.router {
                await router.run()
                return
            }
            await withDiscardingTaskGroup { group in
                for slot in 0..<max(self.configuration.poolSize, 1) {
                    group.addTask { await self.maintain(slot: slot) }
                }
            }
        }
        shutdown()
    }

    /// The number of connections open right now.
    public var openConnections: Int { router?.openConnections ?? pool.withLock { $0.openConnections } }

    // MARK: Commands

    /// Sends one command and waits for its reply.
    /// - Parameters:
    ///   - command: the command.
    ///   - timeout: overrides the configured command timeout.
    /// - Throws: ``RedisError`` with code ``RedisError/Code/reply`` carrying Redis's message for an
    ///   error reply, or a connection or timeout code.
    public func send(_ command: RedisCommand, timeout: Duration? = nil) async throws(RedisError) -> RedisReply {
        try await send(command, timeout: timeout, measuredAs: metrics.instruments(for: command.name))
    }

    /// Sends one command, recording its duration and failure in `instruments` when given.
    func send(_ command: RedisCommand, timeout: Duration?, measuredAs instruments: RedisCommandMetrics.Instruments?) async throws(RedisError) -> RedisReply {
        let start = NIODeadline.now()
        let deadline = start + TimeAmount(timeout ?? configuration.commandTimeout)
        do {
            let reply = try await sendUnmeasured(command, deadline: deadline)
            instruments?.succeeded(since: start)
            return reply
        } catch {
            instruments?.failed(since: start)
            throw error
        }
    }

    /// The instruments a script's runs are recorded in (its name is the `command` label).
    func instruments(for script: RedisScript) -> RedisCommandMetrics.Instruments {
        metrics.instruments(for: script.name)
    }

    /// Sends one command given as words: `send("INCR", "counter")`.
    public func send(_ name: String, _ arguments: any RedisArgument...) async throws(RedisError) -> RedisReply {
        try await send(RedisCommand(name, arguments))
    }

    /// Sends one command and decodes its reply.
    public func send<Value: RedisReplyDecodable>(_ command: RedisCommand, as type: Value.Type, timeout: Duration? = nil) async throws(RedisError) -> Value {
        try Value(redisReply: await send(command, timeout: timeout))
    }

    /// Sends commands in one write on one connection; replies come back in order, error replies
    /// as ``RedisReply/error(_:)`` elements.
    public func pipeline(_ commands: [RedisCommand], timeout: Duration? = nil) async throws(RedisError) -> [RedisReply] {
        guard let first = commands.first else { return [] }
        let instruments = metrics.instruments(for: commands)
        let start = NIODeadline.now()
        let deadline = start + TimeAmount(timeout ?? configuration.commandTimeout)
        do {
            let replies =
                if let router {
                    try await router.pipeline(commands, deadline: deadline)
                } else {
                    try await lease(deadline: deadline, for: first.name).pipeline(commands, deadline: deadline)
                }
            instruments.succeeded(since: start)
            instruments.countErrors(in: replies)
            return replies
        } catch {
            instruments.failed(since: start)
            throw error
        }
    }

    /// `PING`: true when Redis answered in time.
    public func ping(timeout: Duration? = nil) async -> Bool {
        (try? await send(RedisCommand("PING"), timeout: timeout)) != nil
    }

    /// Sends one command with no metrics: the core of ``send(_:timeout:)``, and what the cluster
    /// router calls on a master's pool.
    func sendUnmeasured(_ command: RedisCommand, deadline: NIODeadline) async throws(RedisError) -> RedisReply {
        if let router { return try await router.send(command, deadline: deadline) }
        return try await lease(deadline: deadline, for: command.name).send(command, deadline: deadline)
    }

    /// A pipeline with no metrics, on one connection of this (standalone) pool.
    func pipelineUnmeasured(_ commands: [RedisCommand], deadline: NIODeadline) async throws(RedisError) -> [RedisReply] {
        guard let first = commands.first else { return [] }
        if let router { return try await router.pipeline(commands, deadline: deadline) }
        return try await lease(deadline: deadline, for: first.name).pipeline(commands, deadline: deadline)
    }

    // MARK: Pool

    private func lease(deadline: NIODeadline, for name: String) async throws(RedisError) -> RedisConnection {
        // Fast path: one lock, no allocation.
        switch pool.withLock({ $0.lease() }) {
        case .use(let connection): return connection
        case .fail(let error): throw error
        case .wait: break
        }
        let id = DeadlineWaiters<RedisConnection>.newID()
        let eventLoop = eventLoopGroup.any()
        let promise = eventLoop.makePromise(of: RedisConnection.self)
        switch pool.withLock({ $0.lease(waiter: promise, id: id) }) {
        case .use(let connection):
            promise.succeed(connection)
            return connection
        case .fail(let error):
            promise.fail(error)
            throw error
        case .wait:
            DeadlineWaiters.expire(id, at: deadline, on: eventLoop, waitingFor: "no connection to \(self.configuration.endpoint) for \(name)") { id in
                self.pool.withLock { ($0.waiterTimedOut(id: id), $0.lastError) }
            }
            return try await promise.futureResult.redisResult()
        }
    }

    private func maintain(slot: Int) async {
        var failures = 0
        while !Task.isCancelled && !pool.withLock({ $0.isStopped }) {
            let connection: RedisConnection
            do {
                connection = try await RedisConnection.connect(configuration: configuration, eventLoop: eventLoopGroup.next())
            } catch {
                failures += 1
                pool.withLock { $0.connectFailed(error) }
                if failures == 1 || failures.isMultiple(of: 20) {
                    logger.warning("Redis connection failed, retrying", metadata: ["slot": "\(slot)", "error": "\(error)", "attempts": "\(failures)"])
                }
                try? await Task.sleep(for: configuration.reconnectBackoff.delay(attempt: failures))
                continue
            }
            if failures > 0 {
                logger.info("Redis connection restored", metadata: ["slot": "\(slot)", "endpoint": "\(configuration.endpoint)"])
            }
            failures = 0
            guard let waiters = pool.withLock({ $0.connected(slot: slot, connection) }) else {
                await connection.close()
                return
            }
            for waiter in waiters { waiter.succeed(connection) }
            await withTaskCancellationHandler {
                try? await connection.closeFuture.get()
            } onCancel: {
                connection.closeSoon()
            }
            pool.withLock { $0.disconnected(slot: slot, connection, error: RedisError(.connectionClosed, "connection to \(configuration.endpoint) closed")) }
            if !Task.isCancelled {
                logger.warning("Redis connection lost, reconnecting", metadata: ["slot": "\(slot)", "endpoint": "\(configuration.endpoint)"])
            }
        }
    }

    /// Closes every connection and fails waiting callers; `run()` does this when it ends.
    public func shutdown() {
        router?.shutdown()
        let (connections, waiters) = pool.withLock { $0.shutdown() }
        for waiter in waiters { waiter.fail(RedisError(.clientShutdown, "the Redis client was shut down")) }
        for connection in connections { connection.closeSoon() }
    }
}
