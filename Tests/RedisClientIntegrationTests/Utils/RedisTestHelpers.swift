import Logging
import NIOCore
import RedisClient
import RoomcastTestSupport
import Synchronization
import Testing

/// Collects a subscriber's events so a test can wait for the one it expects.
final class EventRecorder: Sendable {
    let stream: AsyncStream<RedisSubscriber.Event>
    let continuation: AsyncStream<RedisSubscriber.Event>.Continuation
    private let kept = Mutex<[RedisSubscriber.Event]>([])

    init() {
        (stream, continuation) = AsyncStream.makeStream(of: RedisSubscriber.Event.self)
    }

    /// Takes an event: for ``next(within:_:)`` and for ``history``.
    func record(_ event: RedisSubscriber.Event) {
        kept.withLock { $0.append(event) }
        continuation.yield(event)
    }

    /// Every event passed to ``record(_:)`` so far, in order.
    var history: [RedisSubscriber.Event] { kept.withLock { $0 } }

    /// The next event accepted by `match`, skipping others, or a test failure after `timeout`.
    func next<Value: Sendable>(
        within timeout: Duration = .seconds(30),
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

    /// The channels a `connectionLost` names.
    var lostChannels: [String]? {
        if case .connectionLost(_, let channels) = self { return channels }
        return nil
    }
}

/// Runs `body` with a subscriber of `configuration` running and recording its events, then stops it.
func withRecordedSubscriber<Result: Sendable>(
    _ configuration: RedisConfiguration,
    _ body: @Sendable (RedisSubscriber, EventRecorder) async throws -> Result
) async throws -> Result {
    let recorder = EventRecorder()
    let subscriber = RedisSubscriber(configuration: configuration) { recorder.record($0) }
    return try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask { await subscriber.run() }
        defer { group.cancelAll() }
        return try await body(subscriber, recorder)
    }
}
