public import Logging
public import NIOCore
public import NIOPosix
public import ServiceLifecycle

/// What the application's stores need of Redis: commands, pipelines and scripts, wherever the
/// keys live.
///
/// Two clients implement it: ``RedisClient`` (a pool to one server) and ``RedisClusterClient``
/// (the slot map and a ``RedisClient`` per master). ``RedisConfiguration/makeClient(eventLoopGroup:logger:)``
/// makes the one a configuration asks for. Both are services: `run()` keeps them connected.
public protocol RedisClientProtocol: Service, Sendable {
    /// The configuration the client was created with.
    var configuration: RedisConfiguration { get }

    /// The number of connections open right now.
    var openConnections: Int { get }

    /// Keeps the client connected, reconnecting with backoff, until the task is cancelled or a
    /// graceful shutdown is requested; then shuts it down. A lost Redis is not an error here:
    /// callers see it in their commands' errors.
    func run() async

    /// Sends one command and waits for its reply.
    /// - Parameter timeout: overrides the configured command timeout; it covers the wait for a
    ///   connection and the reply.
    /// - Throws: ``RedisError`` with code ``RedisError/Code/reply`` carrying Redis's message for
    ///   an error reply, or a connection or timeout code.
    func send(_ command: RedisCommand, timeout: Duration?) async throws(RedisError) -> RedisReply

    /// Sends commands together (in a cluster, one write per master); replies come back in
    /// order, error replies as ``RedisReply/error(_:)`` elements.
    func pipeline(_ commands: [RedisCommand], timeout: Duration?) async throws(RedisError) -> [RedisReply]

    /// Runs a script with `EVALSHA`; when Redis has lost it (`NOSCRIPT` after a restart or
    /// `SCRIPT FLUSH`), loads it again and retries once.
    /// - Parameter durability: what the reply waits for besides the master's: for a script that
    ///   changes state, pass ``RedisConfiguration/writeDurability`` (the deployment's choice);
    ///   ``RedisWriteDurability/master`` for one that only reads.
    /// - Throws: ``RedisError/Code/notReplicated`` when the script ran but fewer replicas than
    ///   `durability` asks confirmed it in time.
    func evaluate(
        _ script: RedisScript, keys: [String], arguments: [any RedisArgument], timeout: Duration?, durability: RedisWriteDurability
    ) async throws(RedisError) -> RedisReply

    /// Loads scripts into the script cache (`SCRIPT LOAD`) of every server that may run them,
    /// failing early on a Lua syntax error.
    func load(_ scripts: [RedisScript]) async throws(RedisError)

    /// Closes every connection and fails waiting callers; `run()` does this when it ends.
    func shutdown()
}

extension RedisClientProtocol {
    /// Sends one command within the configured timeout.
    public func send(_ command: RedisCommand) async throws(RedisError) -> RedisReply {
        try await send(command, timeout: nil)
    }

    /// Sends one command given as words: `send("INCR", "counter")`.
    public func send(_ name: String, _ arguments: any RedisArgument...) async throws(RedisError) -> RedisReply {
        try await send(RedisCommand(name, arguments), timeout: nil)
    }

    /// Sends one command and decodes its reply.
    public func send<Value: RedisReplyDecodable>(_ command: RedisCommand, as type: Value.Type, timeout: Duration? = nil) async throws(RedisError) -> Value {
        try Value(redisReply: await send(command, timeout: timeout))
    }

    /// Sends commands together within the configured timeout.
    public func pipeline(_ commands: [RedisCommand]) async throws(RedisError) -> [RedisReply] {
        try await pipeline(commands, timeout: nil)
    }

    /// Runs a script within the configured timeout; its reply is the master's
    /// (``RedisWriteDurability/master``).
    public func evaluate(_ script: RedisScript, keys: [String] = [], arguments: [any RedisArgument] = []) async throws(RedisError) -> RedisReply {
        try await evaluate(script, keys: keys, arguments: arguments, timeout: nil, durability: .master)
    }

    /// Runs a script; its reply is the master's (``RedisWriteDurability/master``).
    public func evaluate(_ script: RedisScript, keys: [String], arguments: [any RedisArgument], timeout: Duration?) async throws(RedisError) -> RedisReply {
        try await evaluate(script, keys: keys, arguments: arguments, timeout: timeout, durability: .master)
    }

    /// Runs a script within the configured timeout, its reply waiting for `durability`.
    public func evaluate(
        _ script: RedisScript, keys: [String] = [], arguments: [any RedisArgument] = [], durability: RedisWriteDurability
    ) async throws(RedisError) -> RedisReply {
        try await evaluate(script, keys: keys, arguments: arguments, timeout: nil, durability: durability)
    }

    /// `PING`: true when Redis answered in time.
    public func ping(timeout: Duration? = nil) async -> Bool {
        (try? await send(RedisCommand("PING"), timeout: timeout)) != nil
    }
}

extension RedisConfiguration {
    /// The client this configuration asks for: a ``RedisClusterClient`` in cluster mode, else a
    /// ``RedisClient``. It connects once `run()` is running.
    public func makeClient(
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        logger: Logger = Logger(label: "redis")
    ) -> any RedisClientProtocol {
        if isCluster {
            RedisClusterClient(configuration: self, eventLoopGroup: eventLoopGroup, logger: logger)
        } else {
            RedisClient(configuration: self, eventLoopGroup: eventLoopGroup, logger: logger)
        }
    }
}

/// The layer both clients share under the public API: sends with no metrics (what a cluster
/// client calls on its masters' pools, and a script's run is made of), and the metrics the
/// public calls are measured in.
protocol RedisCommandRunner: Sendable {
    var configuration: RedisConfiguration { get }
    var metrics: RedisCommandMetrics { get }
    /// Sends `command` where its keys live, followed by `WAIT` on the same connection when
    /// `durability` asks for replicas.
    func sendUnmeasured(_ command: RedisCommand, durability: RedisWriteDurability, deadline: NIODeadline) async throws(RedisError) -> RedisReply
    /// `commands` is never empty.
    func pipelineUnmeasured(_ commands: [RedisCommand], deadline: NIODeadline) async throws(RedisError) -> [RedisReply]
    /// Loads a script on every server that answers, after it was found missing where its keys'
    /// slot is not served yet by its own master (a migrating slot's importing master, `ASK`).
    /// Unreachable servers are skipped: they are not what the script was missing from.
    func loadOnEveryServer(_ script: RedisScript, deadline: NIODeadline) async throws(RedisError)
}

extension RedisCommandRunner {
    func deadline(_ timeout: Duration?) -> NIODeadline {
        .now() + TimeAmount(timeout ?? configuration.commandTimeout)
    }

    func sendUnmeasured(_ command: RedisCommand, deadline: NIODeadline) async throws(RedisError) -> RedisReply {
        try await sendUnmeasured(command, durability: .master, deadline: deadline)
    }

    /// ``RedisClientProtocol/send(_:timeout:)``, measured under the command's name.
    func measuredSend(_ command: RedisCommand, timeout: Duration?) async throws(RedisError) -> RedisReply {
        let instruments = metrics.instruments(for: command.name)
        let start = NIODeadline.now()
        do {
            let reply = try await sendUnmeasured(command, deadline: deadline(timeout))
            instruments.succeeded(since: start)
            return reply
        } catch {
            instruments.failed(since: start)
            throw error
        }
    }

    /// ``RedisClientProtocol/pipeline(_:timeout:)``, measured under the commands' shared name.
    func measuredPipeline(_ commands: [RedisCommand], timeout: Duration?) async throws(RedisError) -> [RedisReply] {
        guard !commands.isEmpty else { return [] }
        let instruments = metrics.instruments(for: commands)
        let start = NIODeadline.now()
        do {
            let replies = try await pipelineUnmeasured(commands, deadline: deadline(timeout))
            instruments.succeeded(since: start)
            instruments.countErrors(in: replies)
            return replies
        } catch {
            instruments.failed(since: start)
            throw error
        }
    }

    /// ``RedisClientProtocol/evaluate(_:keys:arguments:timeout:)``, measured as one command named
    /// after the script, a reload included: a `NOSCRIPT` answered by loading it again is not a
    /// failure the caller sees.
    func measuredEvaluate(
        _ script: RedisScript, keys: [String], arguments: [any RedisArgument], timeout: Duration?, durability: RedisWriteDurability
    ) async throws(RedisError) -> RedisReply {
        let command = RedisCommand("EVALSHA", [script.sha1, keys.count] + keys + arguments, keys: keys)
        let instruments = metrics.instruments(for: script.name)
        let start = NIODeadline.now()
        do throws(RedisError) {
            let reply: RedisReply
            do throws(RedisError) {
                reply = try await sendUnmeasured(command, durability: durability, deadline: deadline(timeout))
            } catch where error.replyPrefix == "NOSCRIPT" {
                // Routed by the script's keys: in a cluster, the master that lacked it loads it.
                try script.checkLoaded(try await sendUnmeasured(script.loadCommand(keys: keys), deadline: deadline(timeout)))
                do throws(RedisError) {
                    reply = try await sendUnmeasured(command, durability: durability, deadline: deadline(timeout))
                } catch where error.replyPrefix == "NOSCRIPT" {
                    // Still missing: the keys' slot is migrating and the importing master,
                    // which the retry was asked to go to, lacked it.
                    try await loadOnEveryServer(script, deadline: deadline(timeout))
                    reply = try await sendUnmeasured(command, durability: durability, deadline: deadline(timeout))
                }
            }
            instruments.succeeded(since: start)
            return reply
        } catch {
            instruments.failed(since: start)
            throw error
        }
    }
}
