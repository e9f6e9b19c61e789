public import Logging
import Metrics
public import NIOCore
public import NIOPosix
public import ServiceLifecycle
import Synchronization

/// Dedicated pub/sub links that keep their subscriptions through reconnects and failovers.
///
/// The subscriber remembers which channels its owner wants. Channels are sharded in both modes
/// (`SSUBSCRIBE`; publishers use `SPUBLISH`, Redis 7+). It holds one link per shard: the server,
/// or in cluster mode each master, where it subscribes the channels whose slot that master owns.
/// When a link drops (a dead master, a slot that moved, which Redis announces with an unasked
/// `sunsubscribe`, or `MOVED` on `SSUBSCRIBE`) it reports ``Event/connectionLost(_:channels:)``
/// with that link's channels only; the other links go on delivering. The lost link reconnects
/// with backoff (in cluster mode the slot map is read again, and a master that took over the
/// slots gets a link of its own), its channels are subscribed where they now live, and
/// ``Event/restored(channels:)`` names them: messages published in between may have been
/// missed, and the owner decides how to repair that gap.
public final class RedisSubscriber: Service, Sendable {
    /// What the subscriber tells its owner.
    public enum Event: Sendable {
        /// A message on a subscribed channel, delivered on the connection's event loop.
        case message(RedisPubSubMessage)
        /// A link dropped: messages on `channels` may be missed until ``restored(channels:)``
        /// names them. Channels on the other links are not affected.
        case connectionLost(RedisError, channels: [String])
        /// These channels, lost before, are subscribed again.
        case restored(channels: [String])
    }

    private typealias Shards = SubscriberShards<RedisConnection, EventLoopPromise<Void>>

    private struct State {
        var shards: Shards
        /// Shards with a task keeping their link (cluster mode).
        var maintained: Set<RedisEndpoint> = []
        var refreshRequested = false
        var lastError: RedisError?
        var isShutdown = false
    }

    /// Slot map reads closer together than this are merged.
    static let minimumRefreshInterval: Duration = .milliseconds(100)

    /// The configuration the subscriber was created with.
    public let configuration: RedisConfiguration
    private let eventLoopGroup: any EventLoopGroup
    private let logger: Logger
    private let onEvent: @Sendable (Event) -> Void
    // A mutex keeps "update the wanted set" and "write the command" one step, so concurrent
    // subscribe and unsubscribe calls reach Redis in the order they changed the set.
    private let state: Mutex<State>
    /// `pubsub_reconnects_total` after ``RedisConfiguration/metricsPrefix``: links made again
    /// after a lost one.
    private let reconnects: Counter
    /// Asks the cluster loop to read the slot map again.
    private let refreshes: AsyncStream<Void>
    private let refreshContinuation: AsyncStream<Void>.Continuation

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
        self.state = Mutex(State(shards: SubscriberShards(standalone: configuration.isCluster ? nil : configuration.endpoint)))
        (refreshes, refreshContinuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    /// The channels the owner wants, whether or not they are subscribed now.
    public var channels: Set<String> { state.withLock { $0.shards.wanted } }

    /// True while every wanted channel is subscribed on an open link.
    public var isConnected: Bool { state.withLock { $0.shards.isComplete } }

    // MARK: Subscriptions

    /// Subscribes to channels and returns once Redis confirmed them.
    ///
    /// A channel whose shard has no link waits for one up to the timeout; the channels stay
    /// wanted even if that wait times out, and are subscribed once their shard is back.
    public func subscribe(_ channels: [String], timeout: Duration? = nil) async throws(RedisError) {
        try await startSubscribing(channels, deadline: deadline(timeout)).redisResult()
    }

    /// Unsubscribes from channels; returns once Redis confirmed it (at once where a link is down).
    public func unsubscribe(_ channels: [String], timeout: Duration? = nil) async throws(RedisError) {
        try await startUnsubscribing(channels, deadline: deadline(timeout)).redisResult()
    }

    /// Adds channels to the wanted set and writes `SSUBSCRIBE` on their shards' links before
    /// returning; the future completes when Redis confirmed them (for a shard without a link,
    /// once a new link has).
    ///
    /// Not suspending lets a caller that holds its own lock fix the order in which its subscribe
    /// and unsubscribe calls reach Redis.
    public func startSubscribing(_ channels: [String], deadline: NIODeadline) -> EventLoopFuture<Void> {
        let eventLoop = eventLoopGroup.any()
        guard !channels.isEmpty else { return eventLoop.makeSucceededVoidFuture() }
        return state.withLock { state -> EventLoopFuture<Void> in
            if state.isShutdown { return eventLoop.makeFailedFuture(Self.shutdownError) }
            let (writes, waiting) = state.shards.subscribe(channels)
            var futures = writes.map { subscribing($0, deadline: deadline, on: eventLoop) }
            if !waiting.isEmpty {
                futures.append(waitForLinks(&state, channels: waiting, deadline: deadline, eventLoop: eventLoop))
            }
            return EventLoopFuture.andAllSucceed(futures, on: eventLoop)
        }
    }

    /// Removes channels from the wanted set and writes `SUNSUBSCRIBE` before returning; the future
    /// completes when Redis confirmed it (at once where a link is down).
    public func startUnsubscribing(_ channels: [String], deadline: NIODeadline) -> EventLoopFuture<Void> {
        let eventLoop = eventLoopGroup.any()
        guard !channels.isEmpty else { return eventLoop.makeSucceededVoidFuture() }
        let (futures, served) = state.withLock { state in
            let (writes, served) = state.shards.unsubscribe(channels)
            return (writes.map { unsubscribing($0, deadline: deadline) }, served)
        }
        for waiter in served { waiter.succeed() }
        return EventLoopFuture.andAllSucceed(futures, on: eventLoop)
    }

    /// Writes `SSUBSCRIBE` on a link. Once confirmed, those of its channels reported lost are
    /// reported restored; `MOVED` (the slot map was stale) closes the link, so its channels are
    /// placed again on a fresh map, and this caller waits for them.
    private func subscribing(_ write: Shards.Write, deadline: NIODeadline, on eventLoop: any EventLoop) -> EventLoopFuture<Void> {
        let written = write.link.write("SSUBSCRIBE", confirmedAs: "ssubscribe", write.channels, deadline: deadline)
        written.whenSuccess {
            let restored = self.state.withLock { $0.shards.restore(write.channels, on: write.endpoint) }
            self.report(restored: restored)
        }
        return written.flatMapError { error in
            guard let error = error as? RedisError, error.replyPrefix == "MOVED" else {
                return eventLoop.makeFailedFuture(error)
            }
            write.link.closeSoon()
            return self.state.withLock { state in
                self.waitForLinks(&state, channels: Set(write.channels), deadline: deadline, eventLoop: eventLoop)
            }
        }
    }

    /// Registers a caller to be completed once `channels` are written on a link.
    private func waitForLinks(_ state: inout State, channels: Set<String>, deadline: NIODeadline, eventLoop: any EventLoop) -> EventLoopFuture<Void> {
        let promise = eventLoop.makePromise(of: Void.self)
        let id = DeadlineWaiters<Void>.newID()
        state.shards.wait(id, promise, for: channels)
        DeadlineWaiters.expire(id, at: deadline, on: eventLoop, waitingFor: Self.describe(channels)) { id in
            self.state.withLock { ($0.shards.takeWaiter(id), $0.lastError) }
        }
        return promise.futureResult
    }

    /// "not subscribed to a, b": the first few channels only, as a node may wait for thousands.
    private static func describe(_ channels: Set<String>) -> String {
        let named = channels.sorted().prefix(3).joined(separator: ", ")
        return channels.count > 3 ? "not subscribed to \(channels.count) channels (\(named) …)" : "not subscribed to \(named)"
    }

    /// Writes `SUNSUBSCRIBE` on a link.
    private func unsubscribing(_ write: Shards.Write, deadline: NIODeadline) -> EventLoopFuture<Void> {
        write.link.write("SUNSUBSCRIBE", confirmedAs: "sunsubscribe", write.channels, deadline: deadline)
    }

    /// Writes a placement (under the lock, so writes reach Redis in the order the wanted set
    /// changed); returns what its waiters are completed with, outside the lock.
    private func write(_ placement: Shards.Placement, deadline: NIODeadline) -> EventLoopFuture<Void> {
        let eventLoop = eventLoopGroup.any()
        for write in placement.unsubscribe { _ = unsubscribing(write, deadline: deadline) }
        let written = placement.subscribe.map { subscribing($0, deadline: deadline, on: eventLoop) }
        return EventLoopFuture.andAllSucceed(written, on: eventLoop)
    }

    private func report(restored: [String]) {
        guard !restored.isEmpty else { return }
        logger.info("Redis subscriber restored channels", metadata: ["channels": "\(restored.count)"])
        onEvent(.restored(channels: restored))
    }

    private func deadline(_ timeout: Duration?) -> NIODeadline {
        NIODeadline.now() + TimeAmount(timeout ?? configuration.commandTimeout)
    }

    fileprivate static let shutdownError = RedisError(.clientShutdown, "the Redis subscriber was shut down")

    // MARK: Links

    /// Keeps the links up and subscribed until cancelled or a graceful shutdown.
    public func run() async {
        await cancelWhenGracefulShutdown {
            if self.configuration.isCluster {
                await self.maintainCluster()
            } else {
                await self.maintain(shard: self.configuration.endpoint)
            }
        }
        shutdown()
    }

    /// Closes the links and fails waiting callers; `run()` does this when it ends.
    public func shutdown() {
        let (links, waiters) = state.withLock { state in
            state.isShutdown = true
            return (state.shards.openLinks, state.shards.takeAllWaiters())
        }
        refreshContinuation.finish()
        for waiter in waiters { waiter.fail(Self.shutdownError) }
        for link in links { link.closeSoon() }
    }

    /// Cluster mode: reads the slot map whenever a link asks (a link lost or not made), keeps a
    /// task per master, and places channels whose slot moved.
    private func maintainCluster() async {
        guard case .cluster(let seeds) = configuration.mode else { return }
        requestRefresh()
        let reconnection = Reconnection(backoff: configuration.reconnectBackoff, logger: logger, failureMessage: "Redis subscriber cannot read the slot map, retrying")
        await withDiscardingTaskGroup { group in
            for await _ in refreshes {
                try? await Task.sleep(for: Self.minimumRefreshInterval)
                let read = await reconnection.retry { () throws(RedisError) in
                    let candidates = state.withLock { state in
                        state.refreshRequested = false
                        return state.shards.shardsLinkedFirst + seeds
                    }
                    return try await ClusterTopology.read(fromAny: candidates, configuration: configuration, eventLoopGroup: eventLoopGroup)
                } onFailure: { error in
                    state.withLock { $0.lastError = error }
                }
                guard let (topology, _) = read else { break }
                for endpoint in apply(topology) {
                    group.addTask { await self.maintain(shard: endpoint) }
                }
            }
            group.cancelAll()
        }
    }

    /// Applies a slot map; returns the masters that need a task of their own.
    private func apply(_ topology: ClusterTopology) -> [RedisEndpoint] {
        let deadline = deadline(nil)
        let (applied, started) = state.withLock { state in
            let applied = state.shards.apply(topology)
            for write in applied.unsubscribe { _ = unsubscribing(write, deadline: deadline) }
            let started = topology.masters.filter { !state.maintained.contains($0) }
            state.maintained.formUnion(started)
            return (applied, started)
        }
        for link in applied.stale { link.closeSoon() }
        if !applied.lost.isEmpty {
            logger.warning("Redis subscriber channels moved to another master", metadata: ["channels": "\(applied.lost.count)"])
            onEvent(.connectionLost(RedisError(.connectionClosed, "the slots of \(applied.lost.count) channels moved"), channels: applied.lost))
        }
        // Reported lost first, then placed where they live now (restored once confirmed).
        let (confirmed, served) = state.withLock { state in
            let placement = state.shards.place()
            return (write(placement, deadline: deadline), placement.served)
        }
        for waiter in served { waiter.completeWith(confirmed) }
        return started
    }

    /// Asks the cluster loop for a slot map read, unless one is already coming.
    private func requestRefresh() {
        guard configuration.isCluster else { return }
        let yield = state.withLock { state in
            defer { state.refreshRequested = true }
            return !state.refreshRequested && !state.isShutdown
        }
        if yield { refreshContinuation.yield() }
    }

    /// Keeps one shard's link: connect (retrying), subscribe its channels, serve until the link
    /// closes, report its channels lost, start again; until cancelled, shut down, or (cluster
    /// mode) the shard is no longer a master.
    private func maintain(shard endpoint: RedisEndpoint) async {
        var wasConnected = false
        let onEvent = self.onEvent
        let reconnection = Reconnection(
            backoff: configuration.reconnectBackoff, logger: logger, failureMessage: "Redis subscriber cannot connect, retrying",
            metadata: ["endpoint": "\(endpoint)"]
        )
        while true {
            let connected = await reconnection.retry { () throws(RedisError) in
                try stayOrLeave(endpoint)
                var shard = configuration
                shard.endpoint = endpoint
                shard.mode = .standalone
                let connection = try await RedisConnection.connect(configuration: shard, eventLoop: eventLoopGroup.next(), onPush: { onEvent(.message($0)) })
                try await open(connection, at: endpoint)
                return connection
            } onFailure: { error in
                state.withLock { $0.lastError = error }
                requestRefresh()
            }
            guard let (connection, _) = connected else { return }
            if wasConnected {
                logger.info("Redis subscriber reconnected", metadata: ["endpoint": "\(endpoint)"])
                reconnects.increment()
            }
            wasConnected = true
            await watch(connection)
            let error = RedisError(.connectionClosed, "subscriber connection to \(endpoint) closed")
            let lost = state.withLock { state in
                state.lastError = error
                return state.shards.closed(connection, at: endpoint)
            }
            if Task.isCancelled { return }
            logger.warning("Redis subscriber connection lost, reconnecting", metadata: ["endpoint": "\(endpoint)", "channels": "\(lost.count)"])
            if !lost.isEmpty { onEvent(.connectionLost(error, channels: lost)) }
            requestRefresh()
        }
    }

    /// Throws ``RedisError/Code/clientShutdown`` (which ends the retry loop) once the subscriber
    /// is shut down or `endpoint` is no longer a master of the slot map; its task then ends.
    private func stayOrLeave(_ endpoint: RedisEndpoint) throws(RedisError) {
        let leave = state.withLock { state in
            let leave = state.isShutdown || !state.shards.shards.contains(endpoint)
            if leave { state.maintained.remove(endpoint) }
            return leave
        }
        if leave { throw Self.shutdownError }
    }

    /// Subscribes a new link to its shard's wanted channels, then opens it to callers.
    private func open(_ connection: RedisConnection, at endpoint: RedisEndpoint) async throws(RedisError) {
        let snapshot = state.withLock { $0.shards.channels(ownedBy: endpoint) }
        do {
            // In writes of a bounded size, each given the command timeout: a link may have
            // thousands of channels to take, more than a loaded machine confirms in one timeout.
            for start in stride(from: 0, to: snapshot.count, by: Self.channelsPerWrite) {
                let part = Array(snapshot[start..<min(start + Self.channelsPerWrite, snapshot.count)])
                try await connection.write("SSUBSCRIBE", confirmedAs: "ssubscribe", part, deadline: deadline(nil)).redisResult()
            }
        } catch {
            connection.closeSoon()
            throw error
        }
        let deadline = deadline(nil)
        let opened = state.withLock { state -> (EventLoopFuture<Void>, [EventLoopPromise<Void>], [String])? in
            guard !state.isShutdown else { return nil }
            let (placement, restored) = state.shards.opened(connection, at: endpoint, subscribed: snapshot)
            return (write(placement, deadline: deadline), placement.served, restored)
        }
        guard let (confirmed, served, restored) = opened else {
            connection.closeSoon()
            throw Self.shutdownError
        }
        for waiter in served { waiter.completeWith(confirmed) }
        report(restored: restored)
    }

    /// The most channels a new link subscribes in one write.
    static let channelsPerWrite = 1024

    /// Returns when the link closes; a `PING` per interval finds a link that died silently.
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
        connection.closeSoon()
    }
}
