import Foundation
import NIOCore
import RedisClient
import RoomcastCore
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
        let message = TestNode.filedUnderUser(message)
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
            try await TestNode.publish(marker, on: channel, in: redis)
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

/// A user's events are published to the nodes holding the user's sockets (`_emit.lua`), each on
/// its channel of the user's slot: to watch a user's events, a test subscriber poses as a node
/// with a socket of that user, and files what arrives under the user's name
/// (``RedisKeys/userChannel(_:)``), as a node does.
enum TestNode {
    static let id = NodeID("t3stn0de")!
    /// The test node's socket of every watched user (a socket id is its node's id and 20 more characters).
    static let socket = id.rawValue + String(repeating: "s", count: 20)

    static func channel(of user: UserID, in configuration: RedisConfiguration) -> String {
        RedisKeys.nodeEventsRoute(forUser: user, routing: NodeEventRouting(isCluster: configuration.isCluster)) + id.rawValue
    }

    /// Makes the test node hold a socket of `user`, so that the user's events are published to it.
    static func holdSocket(of user: UserID, in redis: any RedisClientProtocol) async throws {
        _ = try await redis.send("ZADD", RedisKeys.userSockets(user), "99999999999999", socket)
    }

    /// Publishes `payload` on `channel`; on a user's name, to the test node as the user's event.
    static func publish(_ payload: String, on channel: String, in redis: any RedisClientProtocol) async throws {
        if let user = RedisKeys.user(ofChannel: channel) {
            _ = try await redis.send("SPUBLISH", Self.channel(of: user, in: redis.configuration), "\(user) \(payload)")
        } else {
            _ = try await redis.send("SPUBLISH", channel, payload)
        }
    }

    /// A message on the test node's channel, as the user's: `<userId> <payload>` on
    /// `user:{<userId>}:events`; any other message (another node's channel too) as it is.
    static func filedUnderUser(_ message: RedisPubSubMessage) -> RedisPubSubMessage {
        guard message.channel.hasPrefix("node-events:"), message.channel.hasSuffix(id.rawValue), let space = message.payload.readableBytesView.firstIndex(of: UInt8(ascii: " ")) else {
            return message
        }
        var payload = message.payload
        let user = payload.readString(length: space - payload.readerIndex)!
        payload.moveReaderIndex(forwardBy: 1)
        return RedisPubSubMessage(channel: RedisKeys.userChannel(UserID(user)!), payload: payload)
    }
}

/// Runs `body` with a subscriber to `channels` on `redis` that records every message; for a
/// user's name (``RedisKeys/userChannel(_:)``), the user's events (``TestNode``).
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
    let users = channels.compactMap(RedisKeys.user(ofChannel:))
    if !users.isEmpty {
        try await withClient(configuration) { client in
            for user in users { try await TestNode.holdSocket(of: user, in: client) }
        }
    }
    return try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask { await subscriber.run() }
        defer { group.cancelAll() }
        try await subscriber.subscribe(channels.map { channel in RedisKeys.user(ofChannel: channel).map { TestNode.channel(of: $0, in: configuration) } ?? channel })
        return try await body(inbox)
    }
}
