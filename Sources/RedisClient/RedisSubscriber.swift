public import Logging
import Metrics
public import NIOCore
public import NIOPosix
public import ServiceLifecycle
import Synchronization

/// A dedicated pub/sub connection that keeps its subscriptions through reconnects.
///
/// The subscriber remembers which channels its owner wants. When the connection drops it
/// reports ``Event/connectionLost(_:)``, reconnects with backoff, subscribes to every wanted
/// channel again and reports ``Event/restored(channels:)``: messages published in between may
/// have been missed, and the owner decides how to repair that gap.
///
/// Channels are sharded in both modes (`SSUBSCRIBE`; publishers use `SPUBLISH`, Redis 7+). In
/// cluster mode the subscriber holds one connection per master and subscribes each channel on
/// the shard that owns its slot; losing any of them (a dead master, a slot that moved, which
/// Redis announces with an unasked `sunsubscribe`, or `MOVED` on `SSUBSCRIBE`) is handled as one
/// lost connection: the slot map is read again and every channel subscribed where it now lives.
public final class RedisSubscriber: Service, Sendable {
    /// What the subscriber tells its owner.
    public enum Event: Sendable {
        /// A message on a subscribed channel, delivered on the connection's event loop.
        case message(RedisPubSubMessage)
        /// The connection dropped; messages may be missed until ``restored(channels:)``.
        case connectionLost(RedisError)
        /// A new connection is subscribed to these channels again.
        case restored(channels: [String])
    }

    private struct State {
        var wanted: Set<String> = []
        /// Set only once the connections are subscribed to everything wanted.
        var links: SubscriberLinks?
        var generation = 0
        var waiters = DeadlineWaiters<Void>()
        var lastError: RedisError?
        var isShutdown = false
    }

    /// The configuration the subscriber was created with.
    public let configuration: RedisConfiguration
    private let eventLoopGroup: any EventLoopGroup
    private let logger: Logger
    private let onEvent: @Sendable (Event) -> Void
    // A mutex keeps "update the wanted set" and "write the command" one step, so concurrent
    // subscribe and unsubscribe calls reach Redis in the order they changed the set.
    private let state = Mutex(State())
    /// `pubsub_reconnects_total` after ``RedisConfiguration/metricsPrefix``: connections made
    /// again after a lost one.
    private let reconnects: Counter

    /// Creates a subscriber; it connects once `run()` is running.
    /// - Parameter onEvent: receives messages (on the connection's event loop, so keep it short)
    ///   and connection changes.
    public init(
        configuration: RedisConfiguration,
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        logger: Logger = Logger(label: "redis.subscriber"),
        onEvent: @escaping @Sendable (Event) -> Void
    ) {
        self.configuration = configuration
        self.eventLoopGroup = eventLoopGroup
        self.logger = logger
        self.onEvent = onEvent
        self.reconnects = Counter(label: configuration.metricsPrefix + "pubsub_reconnects_total")
    }

    /// The channels the owner wants, whether or not the connection is up.
    public var channels: Set<String> { state.withLock { $0.wanted } }

    /// True while connected and subscribed to every wanted channel.
    public var isConnected: Bool { state.withLock { $0.links != nil } }

    // MARK: Subscriptions

    /// Subscribes to channels and returns once Redis confirmed them.
    ///
    /// While disconnected it waits for the connection up to the timeout; the channels stay wanted
    /// even if that wait times out, and are subscribed on reconnect.
    public func subscribe(_ channels: [String], timeout: Duration? = nil) async throws(RedisError) {
        try await startSubscribing(channels, deadline: deadline(timeout)).redisResult()
    }

    /// Unsubscribes from channels; returns once Redis confirmed it (at once while disconnected).
    public func unsubscribe(_ channels: [String], timeout: Duration? = nil) async throws(RedisError) {
        try await startUnsubscribing(channels, deadline: deadline(timeout)).redisResult()
    }

    /// Adds channels to the wanted set and writes `SUBSCRIBE` before returning; the future
    /// completes when Redis confirmed them (or, while disconnected, once a new connection has).
    ///
    /// Not suspending lets a caller that holds its own lock fix the order in which its subscribe
    /// and unsubscribe calls reach Redis.
    public func startSubscribing(_ channels: [String], deadline: NIODeadline) -> EventLoopFuture<Void> {
        let eventLoop = eventLoopGroup.any()
        guard !channels.isEmpty else { return eventLoop.makeSucceededVoidFuture() }
        return state.withLock { state -> EventLoopFuture<Void> in
            if state.isShutdown { return eventLoop.makeFailedFuture(Self.shutdownError) }
            state.wanted.formUnion(channels)
            guard let links = state.links else {
                return waitForLinks(&state, channels: channels, deadline: deadline, eventLoop: eventLoop)
            }
            return links.write("SSUBSCRIBE", confirmedAs: "ssubscribe", channels, deadline: deadline, on: eventLoop)
                .flatMapError { error in
                    // The slot moved: start over on a fresh map; the channels stay wanted and
                    // this caller waits for the new links.
                    guard let error = error as? RedisError, error.replyPrefix == "MOVED" else {
                        return eventLoop.makeFailedFuture(error)
                    }
                    links.closeAll()
                    return self.state.withLock { state in
                        if let current = state.links, current.generation != links.generation {
                            return eventLoop.makeSucceededVoidFuture()
                        }
                        return self.waitForLinks(&state, channels: channels, deadline: deadline, eventLoop: eventLoop)
                    }
                }
        }
    }

    /// Registers a caller to be completed once new links are subscribed to everything wanted.
    private func waitForLinks(_ state: inout State, channels: [String], deadline: NIODeadline, eventLoop: any EventLoop) -> EventLoopFuture<Void> {
        let promise = eventLoop.makePromise(of: Void.self)
        let id = state.waiters.add(promise)
        DeadlineWaiters.expire(id, at: deadline, on: eventLoop, waitingFor: "not subscribed to \(channels.joined(separator: ", "))") { id in
            self.state.withLock { ($0.waiters.take(id), $0.lastError) }
        }
        return promise.futureResult
    }

    /// Removes channels from the wanted set and writes `UNSUBSCRIBE` before returning; the future
    /// completes when Redis confirmed it (at once while disconnected).
    public func startUnsubscribing(_ channels: [String], deadline: NIODeadline) -> EventLoopFuture<Void> {
        let eventLoop = eventLoopGroup.any()
        return state.withLock { state -> EventLoopFuture<Void> in
            state.wanted.subtract(channels)
            guard let links = state.links, !channels.isEmpty else { return eventLoop.makeSucceededVoidFuture() }
            return links.write("SUNSUBSCRIBE", confirmedAs: "sunsubscribe", channels, deadline: deadline, on: eventLoop)
        }
    }

    private func deadline(_ timeout: Duration?) -> NIODeadline {
        NIODeadline.now() + TimeAmount(timeout ?? configuration.commandTimeout)
    }

    fileprivate static let shutdownError = RedisError(.clientShutdown, "the Redis subscriber was shut down")

    // MARK: Connection

    /// Keeps the connection up and subscribed until cancelled or a graceful shutdown.
    public func run() async {
        await cancelWhenGracefulShutdown {
            await self.maintain()
        }
        shutdown()
    }

    /// Closes the connection and fails waiting callers; `run()` does this when it ends.
    public func shutdown() {
        let (links, waiters) = state.withLock { state in
            state.isShutdown = true
            defer { state.links = nil }
            return (state.links, state.waiters.takeAll())
        }
        for waiter in waiters { waiter.fail(Self.shutdownError) }
        links?.closeAll()
    }

    private func maintain() async {
        var wasConnected = false
        let onEvent = self.onEvent
        let reconnection = Reconnection(backoff: configuration.reconnectBackoff, logger: logger, failureMessage: "Redis subscriber cannot connect, retrying")
        while true {
            let connected = await reconnection.retry { () throws(RedisError) in
                let links = try await connect(onPush: { onEvent(.message($0)) })
                return (links, try await resubscribe(links))
            } onFailure: { error in
                state.withLock { $0.lastError = error }
            }
            guard let ((links, restored), _) = connected else { return }
            if wasConnected {
                logger.info("Redis subscriber reconnected", metadata: ["channels": "\(restored.count)"])
                reconnects.increment()
                onEvent(.restored(channels: restored))
            }
            wasConnected = true
            await watch(links)
            let error = RedisError(.connectionClosed, "subscriber connection to \(configuration.endpoint) closed")
            state.withLock {
                $0.links = nil
                $0.lastError = error
            }
            if Task.isCancelled { return }
            logger.warning("Redis subscriber connection lost, reconnecting")
            onEvent(.connectionLost(error))
        }
    }

    /// Opens the connection, or in cluster mode reads the slot map and opens one per master.
    private func connect(onPush: @escaping @Sendable (RedisPubSubMessage) -> Void) async throws(RedisError) -> SubscriberLinks {
        let generation = state.withLock { state in
            state.generation += 1
            return state.generation
        }
        guard case .cluster(let seeds) = configuration.mode else {
            let connection = try await RedisConnection.connect(configuration: configuration, eventLoop: eventLoopGroup.next(), onPush: onPush)
            return SubscriberLinks(generation: generation, topology: nil, connections: [configuration.endpoint: connection])
        }
        let topology = try await ClusterTopology.read(fromAny: seeds, configuration: configuration, eventLoopGroup: eventLoopGroup)
        var connections: [RedisEndpoint: RedisConnection] = [:]
        for master in topology.masters {
            var shard = configuration
            shard.endpoint = master
            do {
                connections[master] = try await RedisConnection.connect(configuration: shard, eventLoop: eventLoopGroup.next(), onPush: onPush)
            } catch {
                for connection in connections.values { connection.closeSoon() }
                throw error
            }
        }
        return SubscriberLinks(generation: generation, topology: topology, connections: connections)
    }

    /// Subscribes new links to everything wanted, then opens them to callers.
    private func resubscribe(_ links: SubscriberLinks) async throws(RedisError) -> [String] {
        let deadline = NIODeadline.now() + TimeAmount(configuration.commandTimeout)
        let snapshot = state.withLock { Array($0.wanted) }
        let eventLoop = eventLoopGroup.any()
        do {
            if !snapshot.isEmpty {
                try await links.write("SSUBSCRIBE", confirmedAs: "ssubscribe", snapshot, deadline: deadline, on: eventLoop).redisResult()
            }
        } catch {
            links.closeAll()
            throw error
        }
        let (waiters, added, dropped, isShutdown) = state.withLock { state in
            guard !state.isShutdown else { return ([EventLoopPromise<Void>](), Optional<EventLoopFuture<Void>>.none, [String](), true) }
            // The wanted set may have changed while the snapshot was being subscribed: catch up
            // in both directions before the links are opened to callers.
            let dropped = snapshot.filter { !state.wanted.contains($0) }
            if !dropped.isEmpty {
                _ = links.write("SUNSUBSCRIBE", confirmedAs: "sunsubscribe", dropped, deadline: deadline, on: eventLoop)
            }
            let missing = state.wanted.subtracting(snapshot)
            let added = missing.isEmpty ? nil : links.write("SSUBSCRIBE", confirmedAs: "ssubscribe", Array(missing), deadline: deadline, on: eventLoop)
            state.links = links
            return (state.waiters.takeAll(), added, dropped, false)
        }
        if isShutdown {
            links.closeAll()
            throw Self.shutdownError
        }
        for waiter in waiters {
            if let added { waiter.completeWith(added) } else { waiter.succeed() }
        }
        return snapshot.filter { !dropped.contains($0) }
    }

    /// Returns when any connection closes, having closed the others; a `PING` per interval finds
    /// a link that died silently.
    private func watch(_ links: SubscriberLinks) async {
        await withTaskGroup(of: Void.self) { group in
            for connection in links.all {
                group.addTask { await self.watch(connection) }
            }
            await group.next()
            group.cancelAll()
        }
        links.closeAll()
    }

    private func watch(_ connection: RedisConnection) async {
        let interval = configuration.healthCheckInterval
        await withTaskCancellationHandler {
            await withTaskGroup(of: Void.self) { group in
                group.addTask { try? await connection.closeFuture.get() }
                group.addTask {
                    while !Task.isCancelled {
                        try? await Task.sleep(for: interval)
                        if Task.isCancelled { return }
                        do {
                            _ = try await connection.request(
                                name: "PING",
                                bytes: RedisCommand("PING").encoded,
                                replyCount: 1,
                                deadline: .now() + TimeAmount(interval)
                            )
                        } catch {
                            connection.closeSoon()
                            return
                        }
                    }
                }
                await group.next()
                group.cancelAll()
            }
        } onCancel: {
            connection.closeSoon()
        }
    }
}
