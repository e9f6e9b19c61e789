import Logging
import NIOCore
import RedisClient
import RoomcastTestSupport
import Testing

/// Runs `body` with a client whose `run()` is going, then stops it.
func withClient<Result: Sendable>(
    _ configuration: RedisConfiguration,
    _ body: @Sendable (RedisClient) async throws -> Result
) async throws -> Result {
    let client = RedisClient(configuration: configuration, logger: Logger(label: "test.redis"))
    return try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask { await client.run() }
        defer { group.cancelAll() }
        return try await body(client)
    }
}

/// A configuration for a test server, with short timeouts so failures show quickly.
func testConfiguration(_ server: RedisServer, poolSize: Int = 2) throws -> RedisConfiguration {
    var configuration = try RedisConfiguration(url: server.url)
    configuration.poolSize = poolSize
    configuration.commandTimeout = .seconds(5)
    configuration.reconnectBackoff = Backoff(initial: .milliseconds(20), maximum: .milliseconds(200))
    configuration.healthCheckInterval = .milliseconds(500)
    return configuration
}

/// Collects a subscriber's events so a test can wait for the one it expects.
final class EventRecorder: Sendable {
    let stream: AsyncStream<RedisSubscriber.Event>
    let continuation: AsyncStream<RedisSubscriber.Event>.Continuation

    init() {
        (stream, continuation) = AsyncStream.makeStream(of: RedisSubscriber.Event.self)
    }

    /// The next event accepted by `match`, skipping others, or a test failure after `timeout`.
    func next<Value: Sendable>(
        within timeout: Duration = .seconds(10),
        _ match: @escaping @Sendable (RedisSubscriber.Event) -> Value?
    ) async throws -> Value {
        let stream = self.stream
        return try await withThrowingTaskGroup(of: Value?.self) { group in
            group.addTask {
                for await event in stream {
                    if let value = match(event) { return value }
                }
                return nil
            }
            group.addTask {
                try await Task.sleep(for: timeout)
                return nil
            }
            defer { group.cancelAll() }
            guard let value = try await group.next() ?? nil else {
                throw RecorderTimeout()
            }
            return value
        }
    }

    struct RecorderTimeout: Error {}
}

extension RedisSubscriber.Event {
    var message: RedisPubSubMessage? {
        if case .message(let message) = self { return message }
        return nil
    }

    var restoredChannels: [String]? {
        if case .restored(let channels) = self { return channels }
        return nil
    }

    var isConnectionLost: Bool {
        if case .connectionLost = self { return true }
        return false
    }
}

/// Polls until `condition` holds or the timeout passes.
func eventually(within timeout: Duration = .seconds(10), _ condition: @Sendable () async throws -> Bool) async throws -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if try await condition() { return true }
        try await Task.sleep(for: .milliseconds(20))
    }
    return false
}
