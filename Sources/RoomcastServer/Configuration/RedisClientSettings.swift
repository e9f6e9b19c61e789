public import RedisClient

/// `redis.tls_*`: the files and name for a `rediss://` or `rediss-cluster://` URL, as given. They
/// are read (and checked against the URL) by ``GatewaySettings/redisClientConfiguration()`` when
/// the node starts.
public struct RedisTLSSettings: Sendable {
    /// `redis.tls_ca_file`: PEM certificates of the authorities that sign Redis's certificates.
    public var caFile: String?
    /// `redis.tls_cert_file`: the node's client certificate (PEM), for a Redis that asks for one.
    public var certificateFile: String?
    /// `redis.tls_key_file`: the private key of ``certificateFile``.
    public var keyFile: String?
    /// `redis.tls_server_name`: the name Redis's certificates carry, when not the host connected to.
    public var serverName: String?

    /// None set.
    public init() {}
}

/// `redis.wait_replicas`, `redis.wait_timeout_ms`: durable acks, off (0 replicas) by default.
public struct RedisWaitSettings: Sendable {
    /// Replicas that must have a change before it is acknowledged; 0: the master's reply is enough.
    public var replicas: Int = 0
    /// How long a change waits for them before it is answered `unavailable`.
    public var timeout: Duration = .milliseconds(500)

    /// Off.
    public init() {}
}

extension GatewaySettings {
    /// The Redis client's configuration: `redis.url`, `redis.pool_size` and
    /// `redis.command_timeout_ms` as read, with TLS (its files read now) and durable acks applied.
    /// - Throws: ``ConfigurationError`` naming the setting that cannot work: a TLS file that cannot
    ///   be read, TLS settings without a `rediss://` URL, a wait as long as the command timeout.
    public func redisClientConfiguration() throws(ConfigurationError) -> RedisConfiguration {
        var configuration = redis
        let given = [
            ("redis.tls_ca_file", redisTLS.caFile), ("redis.tls_cert_file", redisTLS.certificateFile),
            ("redis.tls_key_file", redisTLS.keyFile), ("redis.tls_server_name", redisTLS.serverName),
        ].filter { $0.1 != nil }
        if let first = given.first?.0 {
            guard configuration.tls != nil else {
                throw ConfigurationError(key: first, reason: "applies to TLS connections: use a rediss:// or rediss-cluster:// redis.url")
            }
            do {
                configuration.tls = try RedisTLS(
                    caFile: redisTLS.caFile, certificateFile: redisTLS.certificateFile, privateKeyFile: redisTLS.keyFile,
                    serverName: redisTLS.serverName
                )
            } catch {
                // The message names the file or name at fault: the setting that holds it.
                let culprit = given.first { key, value in value.map { error.message.contains($0) } ?? false }?.0
                throw ConfigurationError(key: culprit ?? first, reason: error.message)
            }
        }
        if redisWait.replicas > 0 {
            // WAIT holds its command's connection: past the command timeout the connection would close.
            guard redisWait.timeout < configuration.commandTimeout else {
                throw ConfigurationError(
                    key: "redis.wait_timeout_ms", reason: "must be shorter than redis.command_timeout_ms (\(configuration.commandTimeout))"
                )
            }
            configuration.writeDurability = .replicas(redisWait.replicas, timeout: redisWait.timeout)
        }
        return configuration
    }
}
