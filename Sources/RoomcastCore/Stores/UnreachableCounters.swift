import Synchronization

/// The rate-limit scopes whose counter Redis could not reach, each since its first failure in a
/// row: what lets ``RateLimiter`` fail open for a bounded time. Shared by a limiter's copies.
final class UnreachableCounters: Sendable {
    /// Scopes tracked at most; past it, scopes not tracked yet are refused (fail closed), so a
    /// flood of new scopes during an outage cannot grow the node's memory.
    static let capacity = 10_000

    private let since = Mutex<[String: ContinuousClock.Instant]>([:])

    /// The counter of `scope` could not be reached: true while its requests may pass uncounted,
    /// that is for `limit` from the first failure since it was last reached.
    func admit(_ scope: String, for limit: Duration, now: ContinuousClock.Instant = .now) -> Bool {
        since.withLock { since in
            if let first = since[scope] { return now - first < limit }
            if since.count >= Self.capacity {
                since = since.filter { now - $0.value < limit }
                guard since.count < Self.capacity else { return false }
            }
            since[scope] = now
            return true
        }
    }

    /// The counter of `scope` answered: a later failure starts a new window.
    func reached(_ scope: String) {
        since.withLock { since in
            if !since.isEmpty { since[scope] = nil }
        }
    }
}
