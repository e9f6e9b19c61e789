public import Foundation
public import RedisClient

/// The Redis a store or gateway test runs against: one `redis-server`, or a private 3-master
/// Redis Cluster when `ROOMCAST_TEST_REDIS=cluster`. `scripts/test.sh` runs the store and gateway
/// suites both ways, so every behaviour they check is checked on the engine a deployment past one
/// Redis machine uses.
public struct TestRedis: Sendable {
    /// Which engine a test run uses.
    public enum Mode: String, Sendable {
        case standalone
        case cluster

        /// `ROOMCAST_TEST_REDIS` (`standalone`, the default, or `cluster`).
        public static var selected: Mode {
            ProcessInfo.processInfo.environment["ROOMCAST_TEST_REDIS"].flatMap(Mode.init(rawValue:)) ?? .standalone
        }
    }

    public let mode: Mode
    /// The one server, or the cluster's masters.
    public let servers: [RedisServer]
    /// Set in cluster mode.
    public let cluster: RedisCluster?

    /// The URL a gateway or client is given: `redis://…` or `redis-cluster://…,…,…`.
    public var url: String { cluster?.url ?? servers[0].url }

    /// Where logs of processes started for the test may go.
    public var directory: URL { servers[0].directory }

    private init(standalone server: RedisServer) {
        mode = .standalone
        servers = [server]
        cluster = nil
    }

    private init(cluster: RedisCluster) {
        mode = .cluster
        servers = cluster.servers
        self.cluster = cluster
    }

    /// Runs `body` with a fresh Redis of `mode`, then destroys it whatever happened.
    /// - Parameter arguments: extra `redis-server` options for every server (`--appendonly yes`).
    public static func with<Result>(
        mode: Mode = .selected,
        arguments: [String] = [],
        _ body: (TestRedis) async throws -> Result
    ) async throws -> Result {
        switch mode {
        case .standalone:
            try await RedisServer.with(arguments: arguments) { try await body(TestRedis(standalone: $0)) }
        case .cluster:
            try await RedisCluster.with(arguments: arguments) { try await body(TestRedis(cluster: $0)) }
        }
    }

    /// A client configuration for this Redis, with the short timeouts of ``testConfiguration(url:poolSize:)``.
    public func configuration(poolSize: Int = 2) throws -> RedisConfiguration {
        try testConfiguration(url: url, poolSize: poolSize)
    }

    /// Stops every server (SIGTERM), as an outage of the whole Redis would.
    public func stop() async {
        for server in servers { await server.stop() }
    }

    /// Kills every server (SIGKILL): no shutdown, no final flush.
    public func kill() async {
        for server in servers { await server.kill() }
    }

    /// Starts the stopped servers on their ports again; a cluster is waited for until its nodes
    /// agree on the slot map again.
    public func start() async throws {
        for server in servers { try await server.start() }
        try await cluster?.waitUntilStable()
    }

    /// The server holding `key`'s slot: the one server outside cluster mode.
    public func server(servingKey key: String) async throws -> RedisServer {
        guard let cluster else { return servers[0] }
        let port = try await cluster.port(servingKey: key)
        guard let server = servers.first(where: { $0.port == port }) else { throw RedisServerError("no master on port \(port)") }
        return server
    }

    /// Runs `body` once per server with a plain client of that server, for what Redis answers per
    /// server rather than per key: `CLIENT KILL`, `ACL SETUSER`, `KEYS`, `PUBSUB SHARDCHANNELS`.
    public func onEveryServer<Result: Sendable>(_ body: @Sendable (any RedisClientProtocol) async throws -> Result) async throws -> [Result] {
        var results: [Result] = []
        for server in servers {
            results.append(try await withClient(try testConfiguration(server), body))
        }
        return results
    }

    /// The keys matching `pattern` on every server, sorted.
    public func keys(matching pattern: String) async throws -> [String] {
        try await onEveryServer { try await $0.send(RedisCommand("KEYS", pattern), as: [String].self) }.flatMap { $0 }.sorted()
    }

    /// The sharded channels with subscribers, on every server, sorted.
    public func shardChannels(matching pattern: String) async throws -> [String] {
        try await onEveryServer { try await $0.send(RedisCommand("PUBSUB", "SHARDCHANNELS", pattern), as: [String].self) }
            .flatMap { $0 }.sorted()
    }
}

/// Runs `body` with a fresh ``TestRedis`` of the selected mode and a running client of it.
public func withTestRedis<Result: Sendable>(
    poolSize: Int = 2,
    _ body: @Sendable (any RedisClientProtocol, TestRedis) async throws -> Result
) async throws -> Result {
    try await TestRedis.with { redis in
        try await withClient(try redis.configuration(poolSize: poolSize)) { client in
            try await body(client, redis)
        }
    }
}
