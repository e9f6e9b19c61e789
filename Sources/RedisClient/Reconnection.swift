import Logging

/// The one retry loop of the client: a pool's connection, the subscriber's links and the cluster
/// slot map are each tried until they work, with the configured backoff between failures. Only
/// the first failure and every 20th are logged, so a long outage stays readable.
struct Reconnection {
    let backoff: Backoff
    let logger: Logger
    /// Logged on failure, with the error and the attempt count.
    let failureMessage: Logger.Message
    /// Logged with every failure (which pool slot, …).
    var metadata: Logger.Metadata = [:]

    /// Runs `attempt` until it succeeds; returns its value and how many attempts failed first.
    ///
    /// Returns `nil` when the task is cancelled, or when an attempt throws
    /// ``RedisError/Code/clientShutdown``: the owner was shut down.
    /// - Parameter onFailure: sees each failure, to record it for callers waiting in vain.
    func retry<Value>(
        _ attempt: () async throws(RedisError) -> Value,
        onFailure: (RedisError) -> Void = { _ in }
    ) async -> (value: Value, failures: Int)? {
        var failures = 0
        while !Task.isCancelled {
            do {
                // Awaited into a local first: see CONTRIBUTING.md on tuples built around a `try await`.
                let value = try await attempt()
                return (value, failures)
            } catch where error.code == .clientShutdown {
                return nil
            } catch {
                failures += 1
                onFailure(error)
                if failures == 1 || failures.isMultiple(of: 20) {
                    logger.warning(failureMessage, metadata: metadata.merging(["error": "\(error)", "attempts": "\(failures)"]) { $1 })
                }
                try? await Task.sleep(for: backoff.delay(attempt: failures))
            }
        }
        return nil
    }
}
