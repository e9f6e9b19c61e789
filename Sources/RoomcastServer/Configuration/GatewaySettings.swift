public import Logging
public import RedisClient

/// Everything one gateway node needs to start, validated.
///
/// Read from `config/roomcast.yaml`, then `ROOMCAST_*` environment variables, then command-line
/// flags (later sources win); see ``GatewaySettings/init(reader:)``.
public struct GatewaySettings: Sendable {
    /// Address to listen on.
    public var host: String = "127.0.0.1"
    /// TCP port to listen on.
    public var port: Int = 8080
    /// How to reach Redis.
    public var redis: RedisConfiguration = RedisConfiguration()
    /// Minimum log level.
    public var logLevel: Logger.Level = .info

    /// Settings with every default.
    public init() {}

    /// The environment variable that sets `key`: `redis.url` → `ROOMCAST_REDIS_URL`.
    public static func environmentName(of key: String) -> String {
        "ROOMCAST_" + key.split(separator: ".").map { $0.uppercased() }.joined(separator: "_")
    }
}
