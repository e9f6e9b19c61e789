public import Logging
public import NIOCore
public import NIOPosix
public import ServiceLifecycle
import Synchronization

/// A pooled, self-healing client for one Redis server.
///
/// `run()` (a swift-service-lifecycle `Service`) keeps `poolSize` connections open, reconnecting
/// with backoff; commands from any number of tasks are pipelined over them. Every command has a
/// deadline covering both the wait for a connection and the reply, so no caller hangs on a dead
/// Redis.
///
/// For a Redis Cluster use ``RedisClusterClient``, which keeps one of these per master.
public final class RedisClient: RedisClientProtocol, RedisCommandRunner {
    private typealias Pool = ConnectionPoolStateMachine<RedisConnection, EventLoopPromise<RedisConnection>>

    /// The configuration the client was created with.
    public let configuration: RedisConfiguration
    private let eventLoopGroup: any EventLoopGroup
    private let logger: Logger
    // A mutex, not an actor: a lease is a few instructions and must not cost a task hop per command.
    private let pool: Mutex<Pool>
    let metrics: RedisCommandMetrics

    /// Creates a client for `configuration.endpoint`; it connects once `run()` is running.
    /// - Precondition: the configuration is standalone (see ``RedisConfiguration/makeClient(eventLoopGroup:logger:)``).
    public convenience init(
        configuration: RedisConfiguration,
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        logger: Logger = Logger(label: "redis")
    ) {
        self.init(configuration: configuration, eventLoopGroup: eventLoopGroup, logger: logger, failsFast: false)
    }

    /// - Parameter failsFast: commands fail at once, rather than wait for a connection, while the
    ///   server is unreachable (a Redis Cluster master's pool: ``RedisClusterClient``).
    init(configuration: RedisConfiguration, eventLoopGroup: any EventLoopGroup, logger: Logger, failsFast: Bool) {
        precondition(!configuration.isCluster, "a cluster configuration needs RedisClusterClient")
        self.configuration = configuration
        self.eventLoopGroup = eventLoopGroup
        self.logger = logger
        self.pool = Mutex(Pool(size: max(configuration.poolSize, 1), failsFast: failsFast))
        self.metrics = RedisCommandMetrics(prefix: configuration.metricsPrefix)
    }

    /// Keeps the pool connected until the task is cancelled or a graceful shutdown is requested.
    public func run() async {
        // Cancellation, not a graceful-shutdown flag, stops the slots: they may be sleeping in a
        // backoff or waiting on a connection, and both end promptly when cancelled.
        await cancelWhenGracefulShutdown {
            await withDiscardingTaskGroup { group in
                for slot in 0..<max(self.configuration.poolSize, 1) {
                    group.addTask { await self.maintain(slot: slot) }
                }
            }
        }
        shutdown()
    }

    public var openConnections: Int { pool.withLock { $0.openConnections } }

    // MARK: Commands

    public func send(_ command: RedisCommand, timeout: Duration?) async throws(RedisError) -> RedisReply {
        try await measuredSend(command, timeout: timeout)
    }

    public func pipeline(_ commands: [RedisCommand], timeout: Duration?) async throws(RedisError) -> [RedisReply] {
        try await measuredPipeline(commands, timeout: timeout)
    }

    public func call(_ call: RedisFunctionCall, timeout: Duration?, durability: RedisWriteDurability) async throws(RedisError) -> RedisReply {
        try await measuredCall(call, timeout: timeout, durability: durability)
    }

    public func load(_ library: RedisFunctionLibrary) async throws(RedisError) {
        try library.checkLoaded(try await send(library.loadCommand))
    }

    func callUnmeasured(_ call: RedisFunctionCall, durability: RedisWriteDurability, deadline: NIODeadline) async throws(RedisError) -> RedisReply {
        try await run(call, asking: false, durability: durability, deadline: deadline)
    }

    /// Runs a function call on this server: where every function runs, on one server or on a
    /// cluster's master (``RedisClusterClient`` picks the master, this runs it there). When this
    /// server lacks the library, it is loaded here, on the server that said so, and the call runs
    /// again: in a cluster the keys' slot may name another master (an `ASK` target, a map not yet
    /// read again after a promotion), one that has it already.
    ///
    /// The call, `ASKING` before it and `WAIT` after it go in one write on one connection, so
    /// that `WAIT` covers this very call.
    /// - Parameters:
    ///   - asking: send `ASKING` first (an `ASK` redirection to this server).
    ///   - durability: `WAIT` for that many replicas after the call.
    func run(_ call: RedisFunctionCall, asking: Bool, durability: RedisWriteDurability, deadline: NIODeadline) async throws(RedisError) -> RedisReply {
        do throws(RedisError) {
            return try await sendUnmeasured(call.command, asking: asking, durability: durability, deadline: deadline)
        } catch where error.isFunctionMissing {
            try call.library.checkLoaded(try await sendUnmeasured(call.library.loadCommand, deadline: deadline))
            return try await sendUnmeasured(call.command, asking: asking, durability: durability, deadline: deadline)
        }
    }

    func sendUnmeasured(_ command: RedisCommand, durability: RedisWriteDurability, deadline: NIODeadline) async throws(RedisError) -> RedisReply {
        try await sendUnmeasured(command, asking: false, durability: durability, deadline: deadline)
    }

    /// One write on one connection: `ASKING` first when `asking` (a cluster's redirection), the
    /// command, then `WAIT` when `durability` asks for replicas.
    func sendUnmeasured(_ command: RedisCommand, asking: Bool, durability: RedisWriteDurability, deadline: NIODeadline) async throws(RedisError) -> RedisReply {
        try await lease(deadline: deadline, for: command.name).send(command, asking: asking, durability: durability, deadline: deadline)
    }

    /// One write on one connection.
    func pipelineUnmeasured(_ commands: [RedisCommand], deadline: NIODeadline) async throws(RedisError) -> [RedisReply] {
        try await lease(deadline: deadline, for: commands[0].name).pipeline(commands, deadline: deadline)
    }

    // MARK: Pool

    private func lease(deadline: NIODeadline, for name: String) async throws(RedisError) -> RedisConnection {
        // A caller on an event loop (a socket's handler) gets the connection on that loop when
        // there is one: its command is written and its reply read on the caller's own thread,
        // so the caller resumes there with no switch to another thread and back.
        let local = MultiThreadedEventLoopGroup.currentEventLoop
        // Fast path: one lock, no allocation.
        switch pool.withLock({ $0.lease(preferring: { local != nil && $0.eventLoop === local }) }) {
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

    /// Keeps one slot of the pool connected: connect (retrying), serve until the connection
    /// closes, start again; until cancelled or shut down.
    private func maintain(slot: Int) async {
        let reconnection = Reconnection(
            backoff: configuration.reconnectBackoff,
            logger: logger,
            failureMessage: "Redis connection failed, retrying",
            metadata: ["slot": "\(slot)", "endpoint": "\(configuration.endpoint)"]
        )
        while true {
            let connected = await reconnection.retry { () throws(RedisError) in
                // A pool shut down without cancelling its task (a master gone from the slot map) stops here.
                if pool.withLock({ $0.isStopped }) { throw RedisError(.clientShutdown, "the Redis client was shut down") }
                return try await RedisConnection.connect(configuration: configuration, eventLoop: loop(of: slot))
            } onFailure: { error in
                if let (waiters, failure) = pool.withLock({ $0.connectFailed(error) }) {
                    for waiter in waiters { waiter.fail(failure) }
                }
            }
            guard let (connection, failures) = connected else { return }
            if failures > 0 {
                logger.info("Redis connection restored", metadata: reconnection.metadata)
            }
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
            if Task.isCancelled { return }
            logger.warning("Redis connection lost, reconnecting", metadata: reconnection.metadata)
        }
    }

    /// The event loop of a slot's connection: the slots take the group's loops in turn, so that
    /// with at least as many connections as loops, every loop has one of its own.
    private func loop(of slot: Int) -> any EventLoop {
        let loops = Array(eventLoopGroup.makeIterator())
        return loops.isEmpty ? eventLoopGroup.next() : loops[slot % loops.count]
    }

    public func shutdown() {
        let (connections, waiters) = pool.withLock { $0.shutdown() }
        for waiter in waiters { waiter.fail(RedisError(.clientShutdown, "the Redis client was shut down")) }
        for connection in connections { connection.closeSoon() }
    }
}
