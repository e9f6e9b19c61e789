import Synchronization

/// ``finishing(_:within:_:)`` gave up waiting: the operation had not ended by itself.
public struct PatienceExhausted: Error, CustomStringConvertible {
    public let what: String
    public let patience: Duration

    public var description: String { "\(what) had not finished after \(patience)" }
}

/// Runs `body` and gives up on it after `patience`, for an operation that must end by itself
/// rather than wait out some timeout of the code under test.
///
/// A test of "it does not wait for X" makes X's timeout far longer than `patience` (an hour), and
/// `patience` far longer than the operation takes on the busiest machine (minutes). It then tells
/// "ends without the timeout" from "waits for it" whatever the machine's speed, which a bound such
/// as "within 10 s" does not.
///
/// On giving up, `body` is left to end on its own (the test's teardown ends it): a hung operation
/// must not hang the test too.
public func finishing<Value: Sendable>(
    _ what: String,
    within patience: Duration = .seconds(300),
    _ body: @escaping @Sendable () async throws -> Value
) async throws -> Value {
    // Whichever of the operation and the timer comes first resumes the caller; the other finds
    // the continuation taken.
    let caller = Caller<Value>()
    return try await withCheckedThrowingContinuation { continuation in
        caller.waiting.withLock { $0 = continuation }
        let timer = Task {
            try? await Task.sleep(for: patience)
            caller.take()?.resume(throwing: PatienceExhausted(what: what, patience: patience))
        }
        Task {
            let result: Result<Value, any Error>
            do { result = .success(try await body()) } catch { result = .failure(error) }
            let waiting = caller.take()
            timer.cancel()
            waiting?.resume(with: result)
        }
    }
}

/// The caller of ``finishing(_:within:_:)``, resumed once by whichever comes first.
private final class Caller<Value: Sendable>: Sendable {
    let waiting = Mutex<CheckedContinuation<Value, any Error>?>(nil)

    func take() -> CheckedContinuation<Value, any Error>? {
        waiting.withLock { $0.take() }
    }
}
