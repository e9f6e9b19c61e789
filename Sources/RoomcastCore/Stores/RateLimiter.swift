public import RedisClient

/// Request limits that hold across every node: one counter per scope in Redis, in fixed windows
/// (`ratelimit:{<scope>}`, expiring with its window), so an attacker gains nothing by spreading
/// requests over nodes, and Redis holds at most one small key per active scope.
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

    /// Creates a limiter over a client.
    public init(redis: any RedisClientProtocol) {
        self.redis = redis
    }

    /// Counts one request of `scope` against `limit`.
    /// - Parameter what: names the limit in the error (`login attempts for this account`).
    /// - Throws: `rate_limited` with `retryAfter` (the end of the window) when over the limit.
    public func hit(_ scope: String, _ limit: Limit, what: String) async throws(RoomcastError) {
        let reply = try await mappingRedisErrors { () throws(RedisError) in
            try await redis.evaluate(
                RoomcastScripts.rateLimitHit, keys: [RedisKeys.rateLimit(scope)], arguments: [limit.requests, limit.window.wholeMilliseconds]
            )
        }
        guard case .array(let parts) = reply, parts.count == 2, let allowed = try? Int(redisReply: parts[0]),
            let remaining = try? Int(redisReply: parts[1])
        else {
            throw RoomcastError(.internalError, "unexpected reply from rate_limit_hit")
        }
        guard allowed == 1 else {
            throw RoomcastError(
                .rateLimited, "too many \(what): at most \(limit.requests) per \(limit.window.wholeMilliseconds / 1000) s",
                retryAfter: .milliseconds(remaining)
            )
        }
    }
}
