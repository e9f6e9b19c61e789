public import Configuration
import Foundation
import Logging
import RedisClient
import RoomcastCore
import SystemPackage
import WebSocketServer

extension GatewaySettings {
    /// The keys this node reads, for documentation and for flags.
    public enum Key {
        public static let host = "host"
        public static let port = "port"
        public static let redisURL = "redis.url"
        public static let redisPoolSize = "redis.pool_size"
        public static let redisCommandTimeout = "redis.command_timeout_ms"
        public static let redisTLSCAFile = "redis.tls.ca_file"
        public static let redisTLSCertificateFile = "redis.tls.cert_file"
        public static let redisTLSKeyFile = "redis.tls.key_file"
        public static let redisTLSServerName = "redis.tls.server_name"
        public static let redisWaitReplicas = "redis.wait_replicas"
        public static let redisWaitTimeout = "redis.wait_timeout_ms"
        public static let logLevel = "log.level"
        public static let logFormat = "log.format"
        public static let jwtSecret = "jwt.secret"
        public static let jwtTTL = "jwt.ttl_seconds"
        public static let bcryptCost = "auth.bcrypt_cost"
        public static let maxRoomParticipants = "rooms.max_participants"
        public static let maxRoomElements = "rooms.max_elements"
        public static let roomStreamLength = "rooms.stream_length"
        public static let maxMessageLength = "messages.max_length"
        public static let messagesKeptPerRoom = "messages.kept_per_room"
        public static let maxElementContentLength = "elements.max_content_length"
        public static let maxRequestBodySize = "http.max_body_bytes"
        public static let corsOrigins = "http.cors_origins"
        public static let httpIdleTimeout = "http.idle_timeout_ms"
        public static let maxConnectionsPerAddress = "http.max_connections_per_address"
        public static let rateWindow = "rate.window_ms"
        public static let loginsPerAccount = "rate.logins_per_account"
        public static let loginsPerAddress = "rate.logins_per_address"
        public static let mutationsPerUser = "rate.rest_mutations_per_user"
        public static let trustForwardedFor = "rate.trust_forwarded_for"
        public static let presenceBackstop = "presence.backstop_ms"
        /// Replaced by `presence.backstop_ms` (issue #30): refused, so that a deployment tuning
        /// how fast a crashed node's presence goes learns that `node.ttl_ms` does that now.
        public static let retiredPresenceTTL = "presence.ttl_ms"
        public static let gapReadTimeout = "pubsub.gap_read_timeout_ms"
        public static let pingInterval = "engineio.ping_interval_ms"
        public static let pingTimeout = "engineio.ping_timeout_ms"
        public static let maxPayload = "engineio.max_payload"
        public static let connectTimeout = "engineio.connect_timeout_ms"
        public static let expiryWarning = "auth.expiry_warning_ms"
        public static let outboundQueueBytes = "socket.outbound_queue_bytes"
        public static let webSocketCompression = "websocket.compression"
        public static let webSocketCompressionThreshold = "websocket.compression_threshold_bytes"
        public static let inboundQueueBytes = "socket.inbound_queue_bytes"
        public static let eventsPerSecond = "socket.events_per_second"
        public static let eventBurst = "socket.event_burst"
        public static let maxRooms = "socket.max_rooms"
        public static let maxSocketsPerUser = "socket.max_per_user"
        public static let previewRate = "canvas.preview_hz"
        public static let flushDelay = "socket.flush_delay_us"
        public static let drainTimeout = "shutdown.drain_timeout_ms"
        public static let notificationsKept = "notifications.kept_per_user"
        public static let serviceKey = "notifications.service_key"
        public static let apnsKeyPath = "apns.key_path"
        public static let apnsKeyID = "apns.key_id"
        public static let apnsTeamID = "apns.team_id"
        public static let apnsTopic = "apns.topic"
        public static let apnsEndpoint = "apns.endpoint"
        public static let apnsRequestTimeout = "apns.request_timeout_ms"
        public static let fcmServiceAccountPath = "fcm.service_account_path"
        public static let fcmEndpoint = "fcm.endpoint"
        public static let fcmTokenURI = "fcm.token_uri"
        public static let fcmRequestTimeout = "fcm.request_timeout_ms"
        public static let pushMaxAttempts = "push.max_attempts"
        public static let pushRetryDelay = "push.retry_delay_ms"
        public static let pushMaxRetryDelay = "push.max_retry_delay_ms"
        public static let pushPollInterval = "push.poll_interval_ms"
        public static let pushBatchSize = "push.batch_size"
        public static let pushMaxDevicesPerUser = "push.max_devices_per_user"
        public static let nodeAdvertiseURL = "node.advertise_url"
        public static let nodeTTL = "node.ttl_ms"
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
        try readRedisTLS(reader)
        try readRedisWait(reader)
        if let level = reader.string(forKey: Self.configKey(Key.logLevel)) {
            guard let parsed = Logger.Level(rawValue: level.lowercased()) else {
                let names = Logger.Level.allCases.map(\.rawValue).joined(separator: ", ")
                throw ConfigurationError(key: Key.logLevel, reason: "'\(level)' is not one of \(names)")
            }
            logLevel = parsed
        }
        if let format = reader.string(forKey: Self.configKey(Key.logFormat)) {
            guard let parsed = LogFormat(rawValue: format.lowercased()) else {
                throw ConfigurationError(key: Key.logFormat, reason: "'\(format)' is not one of text, json")
            }
            logFormat = parsed
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
        maxMessageLength = try Self.integer(reader, Key.maxMessageLength, in: 1...1_000_000) ?? maxMessageLength
        messagesKeptPerRoom = try Self.integer(reader, Key.messagesKeptPerRoom, in: 1...10_000_000) ?? messagesKeptPerRoom
        maxElementContentLength = try Self.integer(reader, Key.maxElementContentLength, in: 1...ElementFields.maximumContentLength) ?? maxElementContentLength
        maxRequestBodySize = try Self.integer(reader, Key.maxRequestBodySize, in: 1024...(256 * 1024 * 1024)) ?? maxRequestBodySize
        if let milliseconds = try Self.integer(reader, Key.httpIdleTimeout, in: 100...3_600_000) {
            httpIdleTimeout = .milliseconds(milliseconds)
        }
        maxConnectionsPerAddress = try Self.integer(reader, Key.maxConnectionsPerAddress, in: 1...1_000_000) ?? maxConnectionsPerAddress
        try readRequestLimits(reader)
        if let origins = reader.string(forKey: Self.configKey(Key.corsOrigins)) {
            guard let parsed = CORSOrigins(setting: origins) else {
                throw ConfigurationError(key: Key.corsOrigins, reason: "'\(origins)' is not '*' or a comma-separated list of http(s)://host[:port] origins")
            }
            corsOrigins = parsed
        }
        if reader.string(forKey: Self.configKey(Key.retiredPresenceTTL)) != nil {
            throw ConfigurationError(
                key: Key.retiredPresenceTTL,
                reason: "was replaced: a crashed node's presence now goes with its registry entry (node.ttl_ms); members' own expiry is presence.backstop_ms"
            )
        }
        if let milliseconds = try Self.integer(reader, Key.presenceBackstop, in: 300...86_400_000) {
            presenceBackstop = .milliseconds(milliseconds)
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
        if let milliseconds = try Self.integer(reader, Key.expiryWarning, in: 0...86_400_000) {
            socket.expiryWarning = .milliseconds(milliseconds)
        }
        socket.outboundQueueBytes = try Self.integer(reader, Key.outboundQueueBytes, in: 1024...(1024 * 1024 * 1024)) ?? socket.outboundQueueBytes
        socket.inboundQueueBytes = try Self.integer(reader, Key.inboundQueueBytes, in: 1024...(1024 * 1024 * 1024)) ?? socket.inboundQueueBytes
        // One packet of the largest size must fit in the inbox.
        socket.inboundQueueBytes = max(socket.inboundQueueBytes, socket.maxPayload + OutboundBudget.perFrameBytes)
        if let compression = reader.string(forKey: Self.configKey(Key.webSocketCompression)) {
            switch compression.lowercased() {
            case "on", "true": socket.compression.isEnabled = true
            case "off", "false": socket.compression.isEnabled = false
            default: throw ConfigurationError(key: Key.webSocketCompression, reason: "'\(compression)' is not one of on, off")
            }
        }
        socket.compression.thresholdBytes =
            try Self.integer(reader, Key.webSocketCompressionThreshold, in: 0...(64 * 1024 * 1024)) ?? socket.compression.thresholdBytes
        socket.eventsPerSecond = try Self.integer(reader, Key.eventsPerSecond, in: 1...1_000_000) ?? socket.eventsPerSecond
        socket.eventBurst = try Self.integer(reader, Key.eventBurst, in: 1...1_000_000) ?? socket.eventBurst
        socket.maxRooms = try Self.integer(reader, Key.maxRooms, in: 1...100_000) ?? socket.maxRooms
        socket.maxSocketsPerUser = try Self.integer(reader, Key.maxSocketsPerUser, in: 1...100_000) ?? socket.maxSocketsPerUser
        socket.previewRate = try Self.integer(reader, Key.previewRate, in: 1...240) ?? socket.previewRate
        if let microseconds = try Self.integer(reader, Key.flushDelay, in: 0...1_000) {
            socket.flushDelay = .microseconds(microseconds)
        }
        if let milliseconds = try Self.integer(reader, Key.drainTimeout, in: 100...3_600_000) {
            drainTimeout = .milliseconds(milliseconds)
        }
        try readNotifications(reader)
        try readNode(reader)
    }

    /// `redis.tls.*`: files and a name for a `rediss://` or `rediss-cluster://` URL, which alone
    /// means TLS with the system's trust store. The files are read here: a missing one stops
    /// start-up, naming its setting.
    private mutating func readRedisTLS(_ reader: ConfigReader) throws(ConfigurationError) {
        let keys = [Key.redisTLSCAFile, Key.redisTLSCertificateFile, Key.redisTLSKeyFile, Key.redisTLSServerName]
        let values = keys.map { reader.string(forKey: Self.configKey($0)).flatMap { $0.isEmpty ? nil : $0 } }
        guard let first = zip(keys, values).first(where: { $0.1 != nil })?.0 else { return }
        guard redis.tls != nil else {
            throw ConfigurationError(key: first, reason: "applies to TLS connections: use a rediss:// or rediss-cluster:// redis.url")
        }
        do {
            redis.tls = try RedisTLS(caFile: values[0], certificateFile: values[1], privateKeyFile: values[2], serverName: values[3])
        } catch {
            // The message names the file; the key is the first setting it could be.
            let culprit = zip(keys, values).first { key, value in value.map { error.message.contains($0) } ?? false }?.0
            throw ConfigurationError(key: culprit ?? first, reason: error.message)
        }
    }

    /// `redis.wait_replicas`, `redis.wait_timeout_ms`: an acknowledged change waits until that many
    /// replicas have it (`WAIT`), else it is answered `unavailable`. Off (0) by default.
    private mutating func readRedisWait(_ reader: ConfigReader) throws(ConfigurationError) {
        let replicas = try Self.integer(reader, Key.redisWaitReplicas, in: 0...16) ?? 0
        var timeout: Duration = .milliseconds(500)
        if let milliseconds = try Self.integer(reader, Key.redisWaitTimeout, in: 1...600_000) {
            timeout = .milliseconds(milliseconds)
        }
        guard replicas > 0 else { return }
        // WAIT holds the command's connection: past the command timeout the connection would close.
        guard timeout < redis.commandTimeout else {
            throw ConfigurationError(key: Key.redisWaitTimeout, reason: "must be shorter than \(Key.redisCommandTimeout) (\(redis.commandTimeout))")
        }
        redis.writeDurability = .replicas(replicas, timeout: timeout)
    }

    private mutating func readNode(_ reader: ConfigReader) throws(ConfigurationError) {
        if let url = reader.string(forKey: Self.configKey(Key.nodeAdvertiseURL)), !url.isEmpty {
            let trimmed = url.hasSuffix("/") ? String(url.dropLast()) : url
            guard let components = URLComponents(string: trimmed), ["http", "https"].contains(components.scheme ?? ""),
                components.host?.isEmpty == false, components.path.isEmpty, components.query == nil
            else {
                throw ConfigurationError(key: Key.nodeAdvertiseURL, reason: "'\(url)' is not a base URL such as http://10.0.0.5:8080")
            }
            nodeAdvertiseURL = trimmed
        }
        if let milliseconds = try Self.integer(reader, Key.nodeTTL, in: 300...3_600_000) {
            nodeTTL = .milliseconds(milliseconds)
        }
        if let milliseconds = try Self.integer(reader, Key.gapReadTimeout, in: 100...3_600_000) {
            gapReadTimeout = .milliseconds(milliseconds)
        }
    }

    private mutating func readNotifications(_ reader: ConfigReader) throws(ConfigurationError) {
        notifications.keptPerUser = try Self.integer(reader, Key.notificationsKept, in: 1...100_000) ?? notifications.keptPerUser
        if let key = reader.string(forKey: Self.configKey(Key.serviceKey), isSecret: true), !key.isEmpty {
            guard key.utf8.count >= 16 else {
                throw ConfigurationError(key: Key.serviceKey, reason: "must be at least 16 bytes (it has \(key.utf8.count))")
            }
            notifications.serviceKey = key
        }
        let apnsKeys = [Key.apnsKeyPath, Key.apnsKeyID, Key.apnsTeamID, Key.apnsTopic]
        let apnsValues = apnsKeys.map { reader.string(forKey: Self.configKey($0)).flatMap { $0.isEmpty ? nil : $0 } }
        if apnsValues.contains(where: { $0 != nil }) {
            // Half a set of credentials is a mistake, not a wish to leave push off.
            let present = apnsValues.compactMap { $0 }
            guard present.count == apnsKeys.count else {
                let missing = zip(apnsKeys, apnsValues).first { $0.1 == nil }?.0 ?? Key.apnsKeyPath
                throw ConfigurationError(key: missing, reason: "is required with the other apns settings (key_path, key_id, team_id, topic)")
            }
            var apns = APNsSettings(keyPath: present[0], keyID: present[1], teamID: present[2], topic: present[3])
            if let endpoint = reader.string(forKey: Self.configKey(Key.apnsEndpoint)), !endpoint.isEmpty {
                apns.endpoint = endpoint
            }
            if let milliseconds = try Self.integer(reader, Key.apnsRequestTimeout, in: 100...600_000) {
                apns.requestTimeout = .milliseconds(milliseconds)
            }
            notifications.apns = apns
        }
        try readFCM(reader)
        var push = notifications.push
        push.maxAttempts = try Self.integer(reader, Key.pushMaxAttempts, in: 1...100) ?? push.maxAttempts
        if let milliseconds = try Self.integer(reader, Key.pushRetryDelay, in: 10...3_600_000) {
            push.retryDelay = .milliseconds(milliseconds)
        }
        if let milliseconds = try Self.integer(reader, Key.pushMaxRetryDelay, in: 10...86_400_000) {
            push.maxRetryDelay = .milliseconds(milliseconds)
        }
        if let milliseconds = try Self.integer(reader, Key.pushPollInterval, in: 10...60_000) {
            push.pollInterval = .milliseconds(milliseconds)
        }
        push.batchSize = try Self.integer(reader, Key.pushBatchSize, in: 1...1_000) ?? push.batchSize
        push.maxDevicesPerUser = try Self.integer(reader, Key.pushMaxDevicesPerUser, in: 1...1_000) ?? push.maxDevicesPerUser
        notifications.push = push
    }

    private mutating func readFCM(_ reader: ConfigReader) throws(ConfigurationError) {
        func text(_ key: String) -> String? {
            reader.string(forKey: Self.configKey(key)).flatMap { $0.isEmpty ? nil : $0 }
        }
        // As with apns: the endpoint settings alone do not turn FCM on.
        guard let path = text(Key.fcmServiceAccountPath) else { return }
        var fcm = FCMSettings(serviceAccountPath: path)
        if let endpoint = text(Key.fcmEndpoint) { fcm.endpoint = endpoint }
        fcm.tokenURI = text(Key.fcmTokenURI)
        if let milliseconds = try Self.integer(reader, Key.fcmRequestTimeout, in: 100...600_000) {
            fcm.requestTimeout = .milliseconds(milliseconds)
        }
        notifications.fcm = fcm
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

    /// `rate.*`: one window for every limit, and the requests each allows in it.
    private mutating func readRequestLimits(_ reader: ConfigReader) throws(ConfigurationError) {
        var limits = requestLimits
        if let milliseconds = try Self.integer(reader, Key.rateWindow, in: 1000...86_400_000) {
            for path in [\RequestLimits.Settings.loginsPerAccount, \.loginsPerAddress, \.mutationsPerUser] {
                limits[keyPath: path].window = .milliseconds(milliseconds)
            }
        }
        limits.loginsPerAccount.requests = try Self.integer(reader, Key.loginsPerAccount, in: 1...1_000_000) ?? limits.loginsPerAccount.requests
        limits.loginsPerAddress.requests = try Self.integer(reader, Key.loginsPerAddress, in: 1...1_000_000) ?? limits.loginsPerAddress.requests
        limits.mutationsPerUser.requests = try Self.integer(reader, Key.mutationsPerUser, in: 1...1_000_000) ?? limits.mutationsPerUser.requests
        if let text = reader.string(forKey: Self.configKey(Key.trustForwardedFor)) {
            guard let value = Bool(text.lowercased()) else {
                throw ConfigurationError(key: Key.trustForwardedFor, reason: "'\(text)' is not true or false")
            }
            limits.trustForwardedFor = value
        }
        requestLimits = limits
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
