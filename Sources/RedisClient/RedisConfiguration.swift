/// How a ``RedisClient`` or ``RedisSubscriber`` connects and how long it waits.
public struct RedisConfiguration: Sendable {
    /// One server, or a Redis Cluster found through seed nodes.
    public enum Mode: Sendable, Hashable {
        /// One Redis server: ``RedisConfiguration/endpoint``.
        case standalone
        /// A Redis Cluster: the slot map is read (`CLUSTER SLOTS`) from the first seed that
        /// answers, and each command goes to the master owning its keys' slot. The seeds'
        /// credentials are used for every node.
        case cluster(seeds: [RedisEndpoint])
    }

    /// The server and credentials; in cluster mode, the first seed.
    public var endpoint: RedisEndpoint
    /// Standalone (`redis://`, `rediss://`) or cluster (`redis-cluster://`, `rediss-cluster://`).
    public var mode: Mode = .standalone
    /// TLS for every connection (`rediss://`, `rediss-cluster://`); `nil`: plain TCP.
    public var tls: RedisTLS?
    /// How sure the reply of a state-changing script is that the change survives its master's
    /// loss, unless a call asks otherwise (``RedisClientProtocol/call(_:timeout:durability:)``).
    public var writeDurability: RedisWriteDurability = .master
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
    /// Put before the client's metric labels (`redis_command_duration_seconds`, …): the
    /// application's namespace, such as `myapp_`. None by default.
    public var metricsPrefix: String = ""

    /// Creates a configuration for an endpoint.
    public init(endpoint: RedisEndpoint = RedisEndpoint()) {
        self.endpoint = endpoint
    }

    /// Creates a cluster configuration from its seed nodes (at least one).
    public init(clusterSeeds seeds: [RedisEndpoint]) {
        self.init(endpoint: seeds.first ?? RedisEndpoint())
        mode = .cluster(seeds: seeds.isEmpty ? [endpoint] : seeds)
    }

    /// Creates a configuration from a `redis://` URL (one server) or a
    /// `redis-cluster://[[user]:password@]host:port,host:port` URL (a cluster, through seeds).
    ///
    /// `rediss://` and `rediss-cluster://` are the same over TLS, checking the servers'
    /// certificates against the system's trust store; set ``tls`` for a CA file of your own, a
    /// client certificate or a server name.
    public init(url: String) throws(RedisError) {
        let (scheme, rest) = try Self.scheme(of: url)
        switch scheme {
        case .cluster, .tlsCluster:
            self.init(clusterSeeds: try Self.clusterSeeds(url: url, afterScheme: rest))
        case .plain, .tls:
            self.init(endpoint: try RedisEndpoint(url: "redis://" + rest, reportedAs: url))
        }
        if scheme == .tls || scheme == .tlsCluster {
            tls = try RedisTLS()
        }
    }

    /// True in cluster mode.
    public var isCluster: Bool {
        if case .cluster = mode { return true }
        return false
    }

    /// The URL schemes, one server or a cluster, over TCP or TLS.
    enum Scheme: String, CaseIterable {
        case plain = "redis://"
        case tls = "rediss://"
        case cluster = "redis-cluster://"
        case tlsCluster = "rediss-cluster://"
    }

    /// The URL's scheme and what follows it.
    static func scheme(of url: String) throws(RedisError) -> (Scheme, Substring) {
        guard let scheme = Scheme.allCases.first(where: { url.hasPrefix($0.rawValue) }) else {
            throw RedisError(
                .invalidURL,
                "invalid Redis URL '\(RedisEndpoint.redacted(url))': expected redis://, rediss://, redis-cluster:// or rediss-cluster://"
            )
        }
        return (scheme, url.dropFirst(scheme.rawValue.count))
    }

    /// Parses the seeds of a `redis-cluster://` URL: credentials (if any) apply to every host;
    /// a cluster has only database 0.
    static func clusterSeeds(url: String, afterScheme: Substring) throws(RedisError) -> [RedisEndpoint] {
        func invalid(_ why: String) -> RedisError {
            RedisError(.invalidURL, "invalid Redis URL '\(RedisEndpoint.redacted(url))': \(why)")
        }
        var rest = afterScheme
        if rest.hasSuffix("/") { rest = rest.dropLast() }
        var credentials = ""
        if let at = rest.lastIndex(of: "@") {
            credentials = String(rest[...at])
            rest = rest[rest.index(after: at)...]
        }
        guard !rest.contains("/") else { throw invalid("a cluster has only database 0: no /db") }
        let hosts = rest.split(separator: ",", omittingEmptySubsequences: false)
        guard !rest.isEmpty, hosts.allSatisfy({ !$0.isEmpty }) else {
            throw invalid("expected redis-cluster://host:port,host:port (or rediss-cluster:// for TLS)")
        }
        var seeds: [RedisEndpoint] = []
        for host in hosts {
            do {
                seeds.append(try RedisEndpoint(url: "redis://" + credentials + host))
            } catch {
                throw invalid("bad seed '\(host)'")
            }
        }
        return seeds
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
