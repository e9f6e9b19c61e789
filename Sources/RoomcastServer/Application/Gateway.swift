import Hummingbird
public import Logging
import NIOCore
import RedisClient


/// One gateway node: the HTTP server and the services it needs, run as one service group that
/// drains on SIGTERM or SIGINT.
public struct Gateway: Sendable {
    /// The validated settings.
    public let settings: GatewaySettings
    private let logger: Logger

    /// Creates a node from settings.
    public init(settings: GatewaySettings, logger: Logger) {
        self.settings = settings
        self.logger = logger
    }

    /// Runs until a shutdown signal, then stops the server before the Redis client.
    /// - Parameter onReady: called once with the bound address when the server accepts connections.
    public func run(onReady: @escaping @Sendable (String) -> Void = { _ in }) async throws {
        var redisConfiguration = settings.redis
        redisConfiguration.clientName = redisConfiguration.clientName ?? "roomcast-gateway"
        let redis = RedisClient(configuration: redisConfiguration, logger: logger.with(label: "redis"))

        let router = Router()
        HealthRoutes(redis: redis).register(on: router)

        let redisEndpoint = settings.redis.endpoint
        var app = Application(
            router: router,
            configuration: .init(address: .hostname(settings.host, port: settings.port), serverName: "roomcast"),
            onServerRunning: { channel in
                let address = channel.localAddress.map { "\($0.ipAddress ?? "?"):\($0.port ?? 0)" } ?? "?"
                onReady("roomcast ready on http://\(address) (redis \(redisEndpoint))")
            },
            logger: logger
        )
        // Services added here start before the server and stop after it, so in-flight requests
        // can still reach Redis while the server drains.
        app.addServices(redis)
        try await app.runService()
    }
}

extension Logger {
    /// A copy with another label and the same level.
    func with(label: String) -> Logger {
        var copy = Logger(label: label)
        copy.logLevel = logLevel
        return copy
    }
}
