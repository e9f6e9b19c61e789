import Foundation
import NIOCore
import RedisClient
import RoomcastTestSupport
import Synchronization
import Testing

/// The messages a test subscriber received, in arrival order.
final class MessageInbox: Sendable {
    private let messages = Mutex<[RedisPubSubMessage]>([])
    /// The markers of ``fence(_:on:)`` that arrived, kept out of ``received``.
    private let markers = Mutex<Set<String>>([])
    private static let markerPrefix = "test-fence:"

    /// Everything received so far (fence markers left out).
    var received: [RedisPubSubMessage] { messages.withLock { $0 } }

    func append(_ message: RedisPubSubMessage) {
        let payload = String(buffer: message.payload)
        if payload.hasPrefix(Self.markerPrefix) {
            markers.withLock { _ = $0.insert(payload) }
            return
        }
        messages.withLock { $0.append(message) }
    }

    /// A fence for "nothing (more) was published" checks, instead of a sleep that a slow machine
    /// can outlast: publishes a marker on each of `channels` and waits until every marker is in.
    /// The messages of one channel arrive in the order they were published, so by then whatever
    /// was published on those channels before is in ``received``.
    func fence(_ redis: any RedisClientProtocol, on channels: [String], within timeout: Duration = .seconds(30)) async throws {
        var expected: Set<String> = []
        for channel in channels {
            let marker = Self.markerPrefix + UUID().uuidString
            expected.insert(marker)
            _ = try await redis.send("SPUBLISH", channel, marker)
        }
        let deadline = ContinuousClock.now + timeout
        while !expected.isSubset(of: markers.withLock({ $0 })) {
            guard ContinuousClock.now < deadline else { throw InboxTimeout(received: received.count) }
            try await Task.sleep(for: .milliseconds(5))
        }
    }

    /// Waits until `condition` holds for the messages received so far and returns them.
    func wait(
        within timeout: Duration = .seconds(30),
        until condition: ([RedisPubSubMessage]) -> Bool
    ) async throws -> [RedisPubSubMessage] {
        let deadline = ContinuousClock.now + timeout
        while true {
            let current = received
            if condition(current) { return current }
            guard ContinuousClock.now < deadline else { throw InboxTimeout(received: current.count) }
            try await Task.sleep(for: .milliseconds(5))
        }
    }

    /// Waits until at least `count` messages arrived on `channel` (all channels when `nil`).
    func wait(for count: Int, on channel: String? = nil, within timeout: Duration = .seconds(30)) async throws -> [RedisPubSubMessage] {
        try await wait(within: timeout) { messages in
            messages.filter { channel == nil || $0.channel == channel }.count >= count
        }.filter { channel == nil || $0.channel == channel }
    }

    struct InboxTimeout: Error, CustomStringConvertible {
        var received: Int
        var description: String { "timed out waiting for published messages (\(received) received)" }
    }
}

/// Runs `body` with a subscriber to `channels` on `redis` that records every message.
func withSubscriber<Result: Sendable>(
    _ redis: TestRedis,
    to channels: [String],
    _ body: @Sendable (MessageInbox) async throws -> Result
) async throws -> Result {
    let inbox = MessageInbox()
    var configuration = try redis.configuration()
    configuration.clientName = "test-subscriber"
    // A killed server closes the links at once; a health-check PING answered late on a loaded
    // machine must not restart a link (and lose what is published meanwhile).
    configuration.healthCheckInterval = .seconds(10)
    let subscriber = RedisSubscriber(configuration: configuration) { event in
        if case .message(let message) = event { inbox.append(message) }
    }
    return try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask { await subscriber.run() }
        defer { group.cancelAll() }
        try await subscriber.subscribe(channels)
        return try await body(inbox)
    }
}
