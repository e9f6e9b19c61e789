import Logging
public import RedisClient

/// Runs `body` with the client `configuration` asks for, its `run()` going, then stops it.
public func withClient<Result: Sendable>(
    _ configuration: RedisConfiguration,
    _ body: @Sendable (any RedisClientProtocol) async throws -> Result
) async throws -> Result {
    try await withRunning(configuration.makeClient(logger: Logger(label: "test.redis"))) { client in
        try await body(client)
    }
}

/// Runs `body` with `client`'s `run()` going, then stops it.
public func withRunning<Client: RedisClientProtocol, Result: Sendable>(
    _ client: Client,
    _ body: @Sendable (Client) async throws -> Result
) async throws -> Result {
    try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask { await client.run() }
        defer { group.cancelAll() }
        return try await body(client)
    }
}

/// A configuration for a test server, with short timeouts and backoff so failures show quickly.
public func testConfiguration(_ server: RedisServer, poolSize: Int = 2) throws -> RedisConfiguration {
    try testConfiguration(url: server.url, poolSize: poolSize)
}

/// A configuration for a test server or cluster at `url`, with short backoff and a command timeout
/// (30 s) that a loaded 2-core machine running many private clusters at once stays within.
public func testConfiguration(url: String, poolSize: Int = 2) throws -> RedisConfiguration {
    var configuration = try RedisConfiguration(url: url)
    configuration.poolSize = poolSize
    configuration.commandTimeout = .seconds(30)
    configuration.reconnectBackoff = Backoff(initial: .milliseconds(20), maximum: .milliseconds(200))
    configuration.healthCheckInterval = .milliseconds(500)
    return configuration
}

/// Runs `body` with a fresh private `redis-server` and a running client connected to it.
public func withRedis<Result: Sendable>(
    poolSize: Int = 2,
    _ body: @Sendable (any RedisClientProtocol, RedisServer) async throws -> Result
) async throws -> Result {
    try await RedisServer.with { server in
        try await withClient(try testConfiguration(server, poolSize: poolSize)) { client in
            try await body(client, server)
        }
    }
}

/// Polls until `condition` holds or the timeout passes; false when it never did.
public func eventually(within timeout: Duration = .seconds(30), _ condition: @Sendable () async throws -> Bool) async throws -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if try await condition() { return true }
        try await Task.sleep(for: .milliseconds(20))
    }
    return false
}
