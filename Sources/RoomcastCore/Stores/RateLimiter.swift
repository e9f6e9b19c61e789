public import RedisClient

/// Request limits that hold across every node: one counter per scope in Redis, in fixed windows
/// (`ratelimit:{<scope>}`, expiring with its window), so an attacker gains nothing by spreading
/// requests over nodes, and Redis holds at most one small key per active scope.
///
/// A counter that cannot be reached (on a Redis Cluster, its master is down and not yet replaced)
/// fails open for a bounded time: the scope's requests pass uncounted for ``failOpenLimit`` from
/// its first failure, then are refused `unavailable` until the counter answers again. The counter
/// lives on the scope's own slot, not the room's: a limit per user (`rest:<user>`) spans every
/// room, and hash-tagging it with one room would make it a limit per room. Without this, the loss
/// of one master would refuse every REST change of the users whose counter lives there, in
/// rooms on healthy masters too.
public struct RateLimiter: Sendable {
    /// A limit: so many requests per window.
    public struct Limit: Sendable, Equatable {
        public var requests: Int
        public var window: Duration

        public init(requests: Int, per window: Duration) {
            self.requests = requests
            self.window = window
        }
    }

    private let redis: any RedisClientProtocol
    /// How long a scope whose counter cannot be reached goes uncounted: covers a Redis Cluster
    /// failover (`cluster-node-timeout`, 5 s, and about a second more) with room to spare.
    public var failOpenLimit: Duration = .seconds(30)
    private let unreachable = UnreachableCounters()

    /// Creates a limiter over a client.
    public init(redis: any RedisClientProtocol) {
        self.redis = redis
    }

    /// Counts one request of `scope` against `limit`.
    /// - Parameter what: names the limit in the error (`login attempts for this account`).
    /// - Throws: `rate_limited` with `retryAfter` (the end of the window) when over the limit.
    /// - Throws: `unavailable` when the counter has not been reachable for ``failOpenLimit``.
    public func hit(_ scope: String, _ limit: Limit, what: String) async throws(RoomcastError) {
        let counted: RoomcastFunctions.RateLimitHit.Reply
        do throws(RoomcastError) {
            counted = try await redis.call(RoomcastFunctions.RateLimitHit(scope: scope, limit: limit.requests, window: limit.window))
            unreachable.reached(scope)
        } catch where error.code == .unavailable {
            guard unreachable.admit(scope, for: failOpenLimit) else { throw error }
            return
        }
        let remaining = counted.remaining
        guard counted.allowed else {
            throw RoomcastError(
                .rateLimited, "too many \(what): at most \(limit.requests) per \(limit.window.wholeMilliseconds / 1000) s",
                retryAfter: .milliseconds(remaining)
            )
        }
    }
}
