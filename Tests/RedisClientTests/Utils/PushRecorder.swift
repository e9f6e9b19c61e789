import Synchronization

@testable import RedisClient

/// Collects the pub/sub messages a channel handler pushes.
final class PushRecorder: Sendable {
    private let received = Mutex<[RedisPubSubMessage]>([])

    /// The callback to give to the handler.
    var onPush: @Sendable (RedisPubSubMessage) -> Void {
        { message in self.received.withLock { $0.append(message) } }
    }

    /// Everything pushed so far, in order.
    var messages: [RedisPubSubMessage] { received.withLock { $0 } }
}
