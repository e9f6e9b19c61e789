public import Logging
public import NIOCore
public import NIOPosix
public import ServiceLifecycle

/// What the application's stores need of Redis: commands, pipelines and library functions,
/// wherever the keys live.
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

    /// Runs a library function (`FCALL`, or `FCALL_RO` for one that only reads) where its keys
    /// live. A server that lacks the library (`ERR Function not found`: a new master, one
    /// restarted without its data, or `FUNCTION FLUSH`) has it loaded, that very server (in a
    /// cluster, the one that answered, an `ASK` target included), and runs the call again.
    ///
    /// Every call of a function that changes state goes through here.
    /// - Parameter durability: what the reply waits for besides the master's: for a change a
    ///   client is told is done, ``RedisConfiguration/writeDurability`` (the deployment's choice);
    ///   ``RedisWriteDurability/master`` otherwise. `WAIT` follows the call in the same write, on
    ///   the connection of the master that ran it.
    /// - Throws: ``RedisError/Code/notReplicated`` when the function ran but fewer replicas than
    ///   `durability` asks confirmed it in time.
    func call(_ call: RedisFunctionCall, timeout: Duration?, durability: RedisWriteDurability) async throws(RedisError) -> RedisReply

    /// Loads a function library (`FUNCTION LOAD REPLACE`) on every server that may run its
    /// functions, failing early on a Lua error.
    func load(_ library: RedisFunctionLibrary) async throws(RedisError)

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

    /// Runs a library function within the configured timeout; its reply is the master's
    /// (``RedisWriteDurability/master``).
    public func call(_ call: RedisFunctionCall) async throws(RedisError) -> RedisReply {
        try await self.call(call, timeout: nil, durability: .master)
    }

    /// Runs a library function; its reply is the master's (``RedisWriteDurability/master``).
    public func call(_ call: RedisFunctionCall, timeout: Duration?) async throws(RedisError) -> RedisReply {
        try await self.call(call, timeout: timeout, durability: .master)
    }

    /// Runs a library function within the configured timeout, its reply waiting for `durability`.
    public func call(_ call: RedisFunctionCall, durability: RedisWriteDurability) async throws(RedisError) -> RedisReply {
        try await self.call(call, timeout: nil, durability: durability)
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
/// client calls on its masters' pools, and a function call's run is made of), and the metrics the
/// public calls are measured in.
protocol RedisCommandRunner: Sendable {
    var configuration: RedisConfiguration { get }
    var metrics: RedisCommandMetrics { get }
    /// Sends `command` where its keys live, followed by `WAIT` on the same connection when
    /// `durability` asks for replicas.
    func sendUnmeasured(_ command: RedisCommand, durability: RedisWriteDurability, deadline: NIODeadline) async throws(RedisError) -> RedisReply
    /// `commands` is never empty.
    func pipelineUnmeasured(_ commands: [RedisCommand], deadline: NIODeadline) async throws(RedisError) -> [RedisReply]
    /// Runs a function call where its keys live, loading its library on the server that said it
    /// lacks it, `WAIT` after it on the same connection when `durability` asks for replicas
    /// (``RedisClientProtocol/call(_:timeout:durability:)``).
    func callUnmeasured(_ call: RedisFunctionCall, durability: RedisWriteDurability, deadline: NIODeadline) async throws(RedisError) -> RedisReply
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

    /// ``RedisClientProtocol/call(_:timeout:durability:)``, measured as one command named after
    /// the function, a reload included: a server that lacked the library and loaded it is not a
    /// failure the caller sees.
    func measuredCall(_ call: RedisFunctionCall, timeout: Duration?, durability: RedisWriteDurability) async throws(RedisError) -> RedisReply {
        let instruments = metrics.instruments(for: call.function)
        let start = NIODeadline.now()
        do {
            let reply = try await callUnmeasured(call, durability: durability, deadline: deadline(timeout))
            instruments.succeeded(since: start)
            return reply
        } catch {
            instruments.failed(since: start)
            throw error
        }
    }
}
