public import Logging
public import NIOCore
public import NIOPosix
public import ServiceLifecycle
import Synchronization

/// A self-healing client for a Redis Cluster: the slot map, a ``RedisClient`` pool per master,
/// and the routing of commands, pipelines and redirections (`MOVED`, `ASK`).
///
/// The map is read with `CLUSTER SLOTS` from any known node (masters first, then the seeds) when
/// `run()` starts, after a `MOVED`, a `CLUSTERDOWN` or a lost connection to a master, and every
/// ``periodicRefreshInterval``, never more than once per ``minimumRefreshInterval``. The periodic
/// read matters for `SPUBLISH`: a master emptied by a reshard becomes a replica of the new
/// owner and then serves `SPUBLISH` for that slot itself (to nobody) instead of answering `MOVED`.
public final class RedisClusterClient: RedisClientProtocol, RedisCommandRunner {
    private struct State {
        var topology: ClusterTopology?
        var nodes: [RedisEndpoint: RedisClient] = [:]
        var waiters = DeadlineWaiters<Void>()
        var lastError: RedisError?
        var refreshRequested = false
        var nextAny = 0
        var isShutdown = false
    }

    private enum Event: Sendable {
        case start(RedisClient)
        case refresh
    }

    /// Redirections (`MOVED`, `ASK`) one command may follow. Refusals for now (`TRYAGAIN`,
    /// `CLUSTERDOWN`) are asked again until the command's deadline instead.
    static let maximumRedirections = 5
    /// Refreshes closer together than this are merged.
    static let minimumRefreshInterval: Duration = .milliseconds(100)
    /// The slot map is read again this often even when nothing told the client it changed.
    static let periodicRefreshInterval: Duration = .seconds(10)

    /// The configuration the client was created with.
    public let configuration: RedisConfiguration
    private let seeds: [RedisEndpoint]
    private let eventLoopGroup: any EventLoopGroup
    private let logger: Logger
    private let state = Mutex(State())
    let metrics: RedisCommandMetrics
    private let events: AsyncStream<Event>
    private let continuation: AsyncStream<Event>.Continuation

    /// Creates a client for the cluster found through the configuration's seeds; it connects
    /// once `run()` is running.
    /// - Precondition: the configuration is a cluster's (see ``RedisConfiguration/makeClient(eventLoopGroup:logger:)``).
    public init(
        configuration: RedisConfiguration,
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        logger: Logger = Logger(label: "redis")
    ) {
        guard case .cluster(let seeds) = configuration.mode else {
            preconditionFailure("a standalone configuration needs RedisClient")
        }
        self.configuration = configuration
        self.seeds = seeds
        self.eventLoopGroup = eventLoopGroup
        self.logger = logger
        self.metrics = RedisCommandMetrics(prefix: configuration.metricsPrefix)
        (events, continuation) = AsyncStream.makeStream(of: Event.self)
    }

    /// Runs the masters' pools and the slot map's refreshes until the task is cancelled or a
    /// graceful shutdown is requested.
    public func run() async {
        await cancelWhenGracefulShutdown {
            await self.routeUntilCancelled()
        }
        shutdown()
    }

    private func routeUntilCancelled() async {
        requestRefresh()
        let events = self.events
        await withDiscardingTaskGroup { group in
            group.addTask {
                while !Task.isCancelled {
                    try? await Task.sleep(for: Self.periodicRefreshInterval)
                    if !Task.isCancelled { self.requestRefresh() }
                }
            }
            for await event in events {
                switch event {
                case .start(let client):
                    group.addTask { await client.run() }
                case .refresh:
                    group.addTask { await self.refresh() }
                }
            }
            // The stream ends on cancellation or `shutdown()`: stop the pools and the timer too.
            group.cancelAll()
        }
    }

    /// Stops every pool and fails callers waiting for the slot map; `run()` does this when it ends.
    public func shutdown() {
        let (nodes, waiters) = state.withLock { state in
            state.isShutdown = true
            defer { state.nodes.removeAll() }
            return (Array(state.nodes.values), state.waiters.takeAll())
        }
        continuation.finish()
        for waiter in waiters { waiter.fail(RedisError(.clientShutdown, "the Redis client was shut down")) }
        for node in nodes { node.shutdown() }
    }

    /// Open connections over every master's pool.
    public var openConnections: Int {
        state.withLock { Array($0.nodes.values) }.reduce(0) { $0 + $1.openConnections }
    }

    /// The current slot map (nil until the first `CLUSTER SLOTS`), for tests and subscribers.
    var topology: ClusterTopology? { state.withLock { $0.topology } }

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

    /// Every master loads the library.
    public func load(_ library: RedisFunctionLibrary) async throws(RedisError) {
        for reply in try await broadcast(library.loadCommand, deadline: deadline(nil)) {
            try library.checkLoaded(reply)
        }
    }

    /// Runs a function call on the master of its keys' slot, following redirections; the master
    /// that answers `ERR Function not found` loads the library itself, and `WAIT` follows the call
    /// on that master's connection when `durability` asks for replicas
    /// (``RedisClient/run(_:asking:durability:deadline:)``).
    func callUnmeasured(_ call: RedisFunctionCall, durability: RedisWriteDurability, deadline: NIODeadline) async throws(RedisError) -> RedisReply {
        let slot = try call.command.slot()
        return try await send(call.command, slot: slot, deadline: deadline, redirection: nil) {
            (client: RedisClient, asking: Bool) async throws(RedisError) -> RedisReply in
            try await client.run(call, asking: asking, durability: durability, deadline: deadline)
        }
    }

    /// Sends one command to the master of its slot, following redirections; `WAIT` follows it
    /// on the same connection (of the master that applied it) when `durability` asks for replicas.
    func sendUnmeasured(_ command: RedisCommand, durability: RedisWriteDurability, deadline: NIODeadline) async throws(RedisError) -> RedisReply {
        let slot = try command.slot()
        return try await send(command, slot: slot, durability: durability, deadline: deadline, redirection: nil)
    }

    /// Splits a pipeline by master, sends the parts at once and puts the replies back in order.
    /// A command redirected inside a part is sent again alone, following the redirection.
    func pipelineUnmeasured(_ commands: [RedisCommand], deadline: NIODeadline) async throws(RedisError) -> [RedisReply] {
        var slots: [HashSlot?] = []
        slots.reserveCapacity(commands.count)
        for command in commands { slots.append(try command.slot()) }
        try await waitForTopology(deadline: deadline, for: commands.first?.name ?? "pipeline")
        var parts: [RedisEndpoint: (client: RedisClient, indexes: [Int])] = [:]
        for (index, slot) in slots.enumerated() {
            let (endpoint, client) = try target(for: slot, name: commands[index].name)
            parts[endpoint, default: (client, [])].indexes.append(index)
        }
        var replies = [RedisReply](repeating: .null, count: commands.count)
        do {
            try await withThrowingTaskGroup(of: ([Int], [RedisReply]).self) { group in
                for part in parts.values {
                    group.addTask {
                        let sent = try await part.client.pipelineUnmeasured(part.indexes.map { commands[$0] }, deadline: deadline)
                        return (part.indexes, sent)
                    }
                }
                for try await (indexes, sent) in group {
                    for (index, reply) in zip(indexes, sent) { replies[index] = reply }
                }
            }
        } catch {
            let failure = error as? RedisError ?? RedisError(.connectionClosed, "pipeline failed", underlying: error)
            noteFailure(failure)
            throw failure
        }
        for index in replies.indices {
            guard case .error(let message) = replies[index], Self.isRetryable(message) else { continue }
            let redirection = ClusterRedirection(errorMessage: message, template: configuration.endpoint)
            do {
                replies[index] = try await send(commands[index], slot: slots[index], durability: .master, deadline: deadline, redirection: redirection)
            } catch where error.code == .reply {
                replies[index] = .error(error.message)
            }
        }
        return replies
    }

    /// The pools of the slot map's masters, once there is a map.
    private func masters(deadline: NIODeadline, for command: String) async throws(RedisError) -> [RedisClient] {
        try await waitForTopology(deadline: deadline, for: command)
        return state.withLock { state in state.topology.map { $0.masters.compactMap { state.nodes[$0] } } ?? [] }
    }

    /// Sends a command to every master (`FUNCTION LOAD`); returns the replies.
    private func broadcast(_ command: RedisCommand, deadline: NIODeadline) async throws(RedisError) -> [RedisReply] {
        var replies: [RedisReply] = []
        for node in try await masters(deadline: deadline, for: command.name) {
            replies.append(try await node.sendUnmeasured(command, deadline: deadline))
        }
        return replies
    }

    /// Sends `command` to the master of `slot`, or where `first` redirects it, following
    /// redirections (`MOVED`, `ASK`) and retrying `TRYAGAIN` and `CLUSTERDOWN`; `WAIT` follows it
    /// on the same connection when `durability` asks for replicas.
    private func send(
        _ command: RedisCommand,
        slot: HashSlot?,
        durability: RedisWriteDurability,
        deadline: NIODeadline,
        redirection first: ClusterRedirection?
    ) async throws(RedisError) -> RedisReply {
        try await send(command, slot: slot, deadline: deadline, redirection: first) {
            (client: RedisClient, asking: Bool) async throws(RedisError) -> RedisReply in
            try await client.sendUnmeasured(command, asking: asking, durability: durability, deadline: deadline)
        }
    }

    /// Finds the master for `command` (of `slot`, or where `first` redirects it) and has
    /// `perform` send it there, following redirections (`MOVED`, `ASK`) and retrying `TRYAGAIN`
    /// and `CLUSTERDOWN`.
    /// - Parameter perform: sends it on the chosen master, after `ASKING` when told (a function
    ///   call also loads its library there when missing).
    private func send(
        _ command: RedisCommand,
        slot: HashSlot?,
        deadline: NIODeadline,
        redirection first: ClusterRedirection?,
        perform: (RedisClient, _ asking: Bool) async throws(RedisError) -> RedisReply
    ) async throws(RedisError) -> RedisReply {
        try await waitForTopology(deadline: deadline, for: command.name)
        var redirection = first
        var redirections = 0
        var waits = 0
        while true {
            let client: RedisClient
            var asking = false
            if let redirection {
                client = node(at: redirection.endpoint, moving: redirection.kind == .moved ? redirection.slot : nil)
                asking = redirection.kind == .ask
            } else {
                client = try target(for: slot, name: command.name).client
            }
            do throws(RedisError) {
                return try await perform(client, asking)
            } catch where error.code == .reply && Self.isRedirection(error.message) && redirections < Self.maximumRedirections {
                redirections += 1
                redirection = ClusterRedirection(errorMessage: error.message, template: configuration.endpoint)
            } catch where error.code == .reply && Self.isRefusalForNow(error.message) {
                // Refused before it ran, and only until the cluster is whole again: wait, within
                // the command's own deadline, for a failover elsewhere to end. Under Redis's default
                // `cluster-require-full-coverage yes` every master answers CLUSTERDOWN from the
                // moment one is flagged failing until its replica is promoted; failing there would
                // refuse the rooms of healthy masters for that moment.
                waits += 1
                redirection = nil
                if error.message.hasPrefix("CLUSTERDOWN") { requestRefresh() }
                let pause = Self.refusalPause(waits)
                guard NIODeadline.now() + TimeAmount(pause) < deadline else { throw error }
                try? await Task.sleep(for: pause)
            } catch {
                noteFailure(error)
                throw error
            }
        }
    }

    private static func isRetryable(_ message: String) -> Bool {
        isRedirection(message) || isRefusalForNow(message)
    }

    /// `MOVED` or `ASK`: the command belongs elsewhere.
    private static func isRedirection(_ message: String) -> Bool {
        message.hasPrefix("MOVED ") || message.hasPrefix("ASK ")
    }

    /// `CLUSTERDOWN` (the cluster is not whole: a failover, a master restarting) or `TRYAGAIN`
    /// (a multi-key command during a slot's migration): not run, and right to ask again shortly.
    private static func isRefusalForNow(_ message: String) -> Bool {
        message.hasPrefix("TRYAGAIN") || message.hasPrefix("CLUSTERDOWN")
    }

    /// The pause before asking again after the `attempt`th such refusal: 20 ms more each time, at
    /// most 100 ms, so that the command goes through soon after the cluster is whole.
    static func refusalPause(_ attempt: Int) -> Duration {
        .milliseconds(min(20 * attempt, 100))
    }

    /// A lost or unreachable master may mean a failover: read the map again.
    private func noteFailure(_ error: RedisError) {
        switch error.code {
        case .connectionClosed, .connectionFailed, .timeout: requestRefresh()
        default: break
        }
    }

    // MARK: Nodes

    /// The pool of the master owning `slot`, or of any master for a keyless command.
    private func target(for slot: HashSlot?, name: String) throws(RedisError) -> (endpoint: RedisEndpoint, client: RedisClient) {
        let found: (RedisEndpoint, RedisClient)? = state.withLock { state in
            guard let topology = state.topology else { return nil }
            let endpoint: RedisEndpoint?
            if let slot {
                endpoint = topology.master(for: slot)
            } else if !topology.masters.isEmpty {
                state.nextAny = (state.nextAny + 1) % topology.masters.count
                endpoint = topology.masters[state.nextAny]
            } else {
                endpoint = nil
            }
            return endpoint.flatMap { endpoint in state.nodes[endpoint].map { (endpoint, $0) } }
        }
        if let found { return found }
        requestRefresh()
        throw RedisError(.connectionFailed, "no master is known for slot \(slot.map(String.init(describing:)) ?? "any") (\(name)); the cluster map is being read again")
    }

    /// The pool of `endpoint`, made (and started) on first use; `moving` records a `MOVED` slot.
    private func node(at endpoint: RedisEndpoint, moving slot: HashSlot?) -> RedisClient {
        let (client, isNew) = state.withLock { state -> (RedisClient, Bool) in
            if let slot { state.topology?.assign(slot, to: endpoint) }
            if let known = state.nodes[endpoint] { return (known, false) }
            let client = makeNode(endpoint)
            state.nodes[endpoint] = client
            return (client, true)
        }
        if isNew { continuation.yield(.start(client)) }
        if slot != nil { requestRefresh() }
        return client
    }

    private func makeNode(_ endpoint: RedisEndpoint) -> RedisClient {
        var nodeConfiguration = configuration
        nodeConfiguration.mode = .standalone
        nodeConfiguration.endpoint = endpoint
        // A master that cannot be reached (failing over) fails its commands at once: they are
        // answered unavailable, and nothing waits on it (see ConnectionPoolStateMachine).
        return RedisClient(configuration: nodeConfiguration, eventLoopGroup: eventLoopGroup, logger: logger, failsFast: true)
    }

    // MARK: Slot map

    /// Asks `run()` for a refresh, unless one is already coming.
    func requestRefresh() {
        let yield = state.withLock { state in
            defer { state.refreshRequested = true }
            return !state.refreshRequested && !state.isShutdown
        }
        if yield { continuation.yield(.refresh) }
    }

    /// Reads the map until some node answers, then applies it.
    private func refresh() async {
        try? await Task.sleep(for: Self.minimumRefreshInterval)
        let reconnection = Reconnection(backoff: configuration.reconnectBackoff, logger: logger, failureMessage: "cannot read the Redis Cluster slot map, retrying")
        let read = await reconnection.retry { () throws(RedisError) in
            // Redirections seen from here on need another refresh after this one.
            let masters = state.withLock { state in
                state.refreshRequested = false
                return (state.topology?.masters ?? []).map { ($0, state.nodes[$0]) }
            }
            // Masters with an open connection first: a dead one (whose connection attempt may
            // take the whole connect timeout) is asked last.
            let reachable = masters.filter { ($0.1?.openConnections ?? 0) > 0 }.map(\.0)
            let candidates = reachable + masters.map(\.0).filter { !reachable.contains($0) } + seeds
            return try await ClusterTopology.read(fromAny: candidates, configuration: configuration, eventLoopGroup: eventLoopGroup)
        } onFailure: { error in
            state.withLock { $0.lastError = error }
        }
        if let (topology, _) = read { apply(topology) }
    }

    private func apply(_ topology: ClusterTopology) {
        let (started, stopped, waiters, changed) = state.withLock { state in
            let changed = state.topology != topology
            state.topology = topology
            state.lastError = nil
            var started: [RedisClient] = []
            for endpoint in topology.masters where state.nodes[endpoint] == nil {
                let client = makeNode(endpoint)
                state.nodes[endpoint] = client
                started.append(client)
            }
            let gone = state.nodes.keys.filter { !topology.masters.contains($0) }
            let stopped = gone.compactMap { state.nodes.removeValue(forKey: $0) }
            return (started, stopped, state.waiters.takeAll(), changed)
        }
        if changed {
            logger.info("Redis Cluster slot map read", metadata: ["masters": "\(topology.masters.map(\.description).joined(separator: ","))", "complete": "\(topology.coversAllSlots)"])
        }
        for client in started { continuation.yield(.start(client)) }
        for client in stopped { client.shutdown() }
        for waiter in waiters { waiter.succeed() }
    }

    private func waitForTopology(deadline: NIODeadline, for name: String) async throws(RedisError) {
        let eventLoop = eventLoopGroup.any()
        let promise = eventLoop.makePromise(of: Void.self)
        let ready: Result<Void, RedisError>? = state.withLock { state in
            if state.isShutdown { return .failure(RedisError(.clientShutdown, "the Redis client was shut down")) }
            if state.topology != nil { return .success(()) }
            let id = state.waiters.add(promise)
            DeadlineWaiters.expire(id, at: deadline, on: eventLoop, waitingFor: "no Redis Cluster slot map for \(name)") { id in
                self.state.withLock { ($0.waiters.take(id), $0.lastError) }
            }
            return nil
        }
        switch ready {
        case .success:
            promise.succeed()
        case .failure(let error):
            promise.fail(error)
            throw error
        case nil:
            try await promise.futureResult.redisResult()
        }
    }
}
