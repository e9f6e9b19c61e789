public import Configuration
import Logging
import RedisClient
import SystemPackage

extension GatewaySettings {
    /// The keys this node reads, for documentation and for flags.
    public enum Key {
        public static let host = "host"
        public static let port = "port"
        public static let redisURL = "redis.url"
        public static let redisPoolSize = "redis.pool_size"
        public static let redisCommandTimeout = "redis.command_timeout_ms"
        public static let logLevel = "log.level"
        public static let jwtSecret = "jwt.secret"
        public static let jwtTTL = "jwt.ttl_seconds"
        public static let bcryptCost = "auth.bcrypt_cost"
        public static let maxRoomParticipants = "rooms.max_participants"
        public static let maxRoomElements = "rooms.max_elements"
        public static let roomStreamLength = "rooms.stream_length"
        public static let presenceLifetime = "presence.ttl_ms"
        public static let pingInterval = "engineio.ping_interval_ms"
        public static let pingTimeout = "engineio.ping_timeout_ms"
        public static let maxPayload = "engineio.max_payload"
        public static let connectTimeout = "engineio.connect_timeout_ms"
        public static let outboundQueueLimit = "socket.outbound_queue_limit"
    }

    /// Reads and validates every setting; a malformed value fails naming its key.
    ///
    /// Values are read as text and parsed here: swift-configuration's typed accessors fall back
    /// to the default on a malformed value, which would hide `ROOMCAST_PORT=abc`.
    public init(reader: ConfigReader) throws(ConfigurationError) {
        self.init()
        if let host = reader.string(forKey: Self.configKey(Key.host)) {
            guard !host.isEmpty else { throw ConfigurationError(key: Key.host, reason: "must not be empty") }
            self.host = host
        }
        port = try Self.integer(reader, Key.port, in: 0...65535) ?? port
        if let url = reader.string(forKey: Self.configKey(Key.redisURL), isSecret: true) {
            do {
                redis = try RedisConfiguration(url: url)
            } catch {
                throw ConfigurationError(key: Key.redisURL, reason: error.message)
            }
        }
        redis.poolSize = try Self.integer(reader, Key.redisPoolSize, in: 1...64) ?? redis.poolSize
        if let milliseconds = try Self.integer(reader, Key.redisCommandTimeout, in: 1...600_000) {
            redis.commandTimeout = .milliseconds(milliseconds)
        }
        if let level = reader.string(forKey: Self.configKey(Key.logLevel)) {
            guard let parsed = Logger.Level(rawValue: level.lowercased()) else {
                let names = Logger.Level.allCases.map(\.rawValue).joined(separator: ", ")
                throw ConfigurationError(key: Key.logLevel, reason: "'\(level)' is not one of \(names)")
            }
            logLevel = parsed
        }
        if let secret = reader.string(forKey: Self.configKey(Key.jwtSecret), isSecret: true) {
            // HS256 with a short key is guessable, and jwt-kit asserts on it in debug builds.
            guard secret.utf8.count >= 32 else {
                throw ConfigurationError(key: Key.jwtSecret, reason: "must be at least 32 bytes (it has \(secret.utf8.count))")
            }
            jwtSecret = secret
        }
        if let seconds = try Self.integer(reader, Key.jwtTTL, in: 60...(365 * 24 * 3600)) {
            tokenLifetime = .seconds(seconds)
        }
        bcryptCost = try Self.integer(reader, Key.bcryptCost, in: 4...31) ?? bcryptCost
        maxRoomParticipants = try Self.integer(reader, Key.maxRoomParticipants, in: 2...1000) ?? maxRoomParticipants
        maxRoomElements = try Self.integer(reader, Key.maxRoomElements, in: 1...1_000_000) ?? maxRoomElements
        roomStreamLength = try Self.integer(reader, Key.roomStreamLength, in: 10...10_000_000) ?? roomStreamLength
        if let milliseconds = try Self.integer(reader, Key.presenceLifetime, in: 300...3_600_000) {
            presenceLifetime = .milliseconds(milliseconds)
        }
        if let milliseconds = try Self.integer(reader, Key.pingInterval, in: 50...3_600_000) {
            socket.pingInterval = .milliseconds(milliseconds)
        }
        if let milliseconds = try Self.integer(reader, Key.pingTimeout, in: 50...3_600_000) {
            socket.pingTimeout = .milliseconds(milliseconds)
        }
        socket.maxPayload = try Self.integer(reader, Key.maxPayload, in: 1024...(64 * 1024 * 1024)) ?? socket.maxPayload
        if let milliseconds = try Self.integer(reader, Key.connectTimeout, in: 50...3_600_000) {
            socket.connectTimeout = .milliseconds(milliseconds)
        }
        socket.outboundQueueLimit = try Self.integer(reader, Key.outboundQueueLimit, in: 16...1_000_000) ?? socket.outboundQueueLimit
    }

    /// Checks what serving needs beyond valid values: a JWT secret.
    public func validateForServing() throws(ConfigurationError) {
        guard jwtSecret != nil else {
            throw ConfigurationError(key: Key.jwtSecret, reason: "is required to sign and verify tokens (32 bytes or more)")
        }
    }

    /// `redis.url` → the key components `["redis", "url"]`.
    static func configKey(_ dotted: String) -> ConfigKey {
        ConfigKey(dotted.split(separator: ".").map(String.init))
    }

    private static func integer(_ reader: ConfigReader, _ key: String, in range: ClosedRange<Int>) throws(ConfigurationError) -> Int? {
        guard let text = reader.string(forKey: Self.configKey(key)) else { return nil }
        guard let value = Int(text), range.contains(value) else {
            throw ConfigurationError(key: key, reason: "'\(text)' is not a whole number in \(range.lowerBound)...\(range.upperBound)")
        }
        return value
    }

    /// Loads settings from their three sources, highest precedence first: `overrides` (flags),
    /// `environment` (`ROOMCAST_*`), then the YAML file.
    /// - Parameters:
    ///   - configFile: the YAML file; a missing file is an error only when `requireFile` is true.
    ///   - overrides: values from command-line flags, by key.
    ///   - environment: the process environment.
    public static func load(
        configFile: String,
        requireFile: Bool,
        overrides: [String: String],
        environment: [String: String]
    ) async throws -> GatewaySettings {
        let flags = InMemoryProvider(
            name: "flags",
            values: Dictionary(uniqueKeysWithValues: overrides.map { (AbsoluteConfigKey(Self.configKey($0.key)), ConfigValue(.string($0.value), isSecret: false)) })
        )
        let variables = EnvironmentVariablesProvider(environmentVariables: environment).prefixKeys(with: ConfigKey(["roomcast"]))
        let file: FileProvider<YAMLSnapshot>
        do {
            file = try await FileProvider<YAMLSnapshot>(filePath: FilePath(configFile), allowMissing: !requireFile)
        } catch {
            throw ConfigurationError(key: "config", reason: "cannot read \(configFile): \(error)")
        }
        return try GatewaySettings(reader: ConfigReader(providers: [flags, variables, file]))
    }
}
