import NIOCore
import Synchronization

@testable import RedisClient

/// A promise whose outcome a test can inspect at any moment, without waiting.
///
/// On an `EmbeddedEventLoop` callbacks run as soon as the promise completes, so after feeding a
/// reply the probe already knows the result.
final class Probe<Value: Sendable>: Sendable {
    /// The promise to hand to the code under test.
    let promise: EventLoopPromise<Value>
    private let outcome = Mutex<Result<Value, any Error>?>(nil)

    init(on eventLoop: any EventLoop) {
        promise = eventLoop.makePromise(of: Value.self)
        promise.futureResult.whenComplete { result in self.outcome.withLock { $0 = result } }
    }

    /// True until the promise completes.
    var isPending: Bool { outcome.withLock { $0 == nil } }

    /// The value, when the promise succeeded.
    var value: Value? {
        outcome.withLock { result in
            guard case .success(let value) = result else { return nil }
            return value
        }
    }

    /// The error, when the promise failed with a ``RedisError``.
    var error: RedisError? {
        outcome.withLock { result in
            guard case .failure(let error) = result else { return nil }
            return error as? RedisError
        }
    }
}
