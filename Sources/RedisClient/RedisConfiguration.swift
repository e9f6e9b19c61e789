/// How a ``RedisClient`` or ``RedisSubscriber`` connects and how long it waits.
public struct RedisConfiguration: Sendable {
    /// The server and credentials.
    public var endpoint: RedisEndpoint
    /// Connections the client keeps open; commands are pipelined over all of them.
    public var poolSize: Int = 2
    /// Limit for establishing a TCP connection and its handshake.
    public var connectTimeout: Duration = .seconds(2)
    /// Default limit for one command, from call to reply, including the wait for a connection.
    public var commandTimeout: Duration = .seconds(2)
    /// Delays between reconnection attempts.
    public var reconnectBackoff: Backoff = Backoff()
    /// How often an idle subscriber connection is checked with `PING`.
    public var healthCheckInterval: Duration = .seconds(5)
    /// Sent with `CLIENT SETNAME` so that `CLIENT LIST` shows who is connected.
    public var clientName: String?

    /// Creates a configuration for an endpoint.
    public init(endpoint: RedisEndpoint = RedisEndpoint()) {
        self.endpoint = endpoint
    }

    /// Creates a configuration from a `redis://` URL.
    public init(url: String) throws(RedisError) {
        self.init(endpoint: try RedisEndpoint(url: url))
    }
}

/// Exponential reconnection delays with jitter (half to all of the ceiling), so that many nodes
/// reconnecting after one Redis restart do not arrive in lockstep.
public struct Backoff: Sendable, Hashable {
    /// The delay ceiling before the first retry.
    public var initial: Duration
    /// The largest delay.
    public var maximum: Duration

    /// Creates a backoff policy.
    public init(initial: Duration = .milliseconds(50), maximum: Duration = .seconds(2)) {
        self.initial = initial
        self.maximum = maximum
    }

    /// The delay before retry number `attempt` (1-based).
    public func delay(attempt: Int) -> Duration {
        let exponent = min(max(attempt - 1, 0), 20)
        let ceiling = min(initial * (1 << exponent), maximum)
        let nanoseconds = ceiling.components.seconds * 1_000_000_000 + ceiling.components.attoseconds / 1_000_000_000
        return .nanoseconds(Int64.random(in: (nanoseconds / 2)...max(nanoseconds, 1)))
    }
}
