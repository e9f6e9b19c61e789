import Foundation
import Logging
import RedisClient
import RoomcastServer
import Testing
import WebSocketServer

@Suite("Gateway settings: file, environment, flags")
struct GatewaySettingsTests {
    private func withConfigFile<Result>(_ yaml: String, _ body: (String) async throws -> Result) async throws -> Result {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("roomcast-\(UUID().uuidString).yaml").path
        try yaml.write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        return try await body(path)
    }

    private let sampleFile = """
        host: 0.0.0.0
        port: 9000
        redis:
          url: redis://:pw@redis.internal:6380/2
          pool_size: 4
          command_timeout_ms: 750
        log:
          level: debug
        """

    @Test("defaults apply when nothing is set and the default file is missing")
    func defaults() async throws {
        let settings = try await GatewaySettings.load(configFile: "/nonexistent/roomcast.yaml", requireFile: false, overrides: [:], environment: [:])
        #expect(settings.host == "127.0.0.1")
        #expect(settings.port == 8080)
        #expect(settings.redis.endpoint == RedisEndpoint(host: "127.0.0.1", port: 6379))
        #expect(settings.logLevel == .info)
    }

    @Test("the YAML file sets every key")
    func fileValues() async throws {
        try await withConfigFile(sampleFile) { path in
            let settings = try await GatewaySettings.load(configFile: path, requireFile: true, overrides: [:], environment: [:])
            #expect(settings.host == "0.0.0.0")
            #expect(settings.port == 9000)
            #expect(settings.redis.endpoint == RedisEndpoint(host: "redis.internal", port: 6380, password: "pw", database: 2))
            #expect(settings.redis.poolSize == 4)
            #expect(settings.redis.commandTimeout == .milliseconds(750))
            #expect(settings.logLevel == .debug)
        }
    }

    @Test("messages.kept_per_room: 10,000 by default, set by the file or the environment")
    func messagesKept() async throws {
        let defaults = try await GatewaySettings.load(configFile: "/nonexistent/roomcast.yaml", requireFile: false, overrides: [:], environment: [:])
        #expect(defaults.messagesKeptPerRoom == 10_000)
        try await withConfigFile("messages:\n  kept_per_room: 250\n") { path in
            let fromFile = try await GatewaySettings.load(configFile: path, requireFile: true, overrides: [:], environment: [:])
            #expect(fromFile.messagesKeptPerRoom == 250)
            let fromEnvironment = try await GatewaySettings.load(
                configFile: path, requireFile: true, overrides: [:], environment: ["ROOMCAST_MESSAGES_KEPT_PER_ROOM": "40"]
            )
            #expect(fromEnvironment.messagesKeptPerRoom == 40)
        }
    }

    @Test("websocket.compression: on with a 1024-byte threshold by default; off, or another threshold, from the file or the environment")
    func compression() async throws {
        let defaults = try await GatewaySettings.load(configFile: "/nonexistent/roomcast.yaml", requireFile: false, overrides: [:], environment: [:])
        #expect(defaults.socket.compression == WebSocketCompression(isEnabled: true, thresholdBytes: 1024))
        try await withConfigFile("websocket:\n  compression: off\n  compression_threshold_bytes: 0\n") { path in
            let fromFile = try await GatewaySettings.load(configFile: path, requireFile: true, overrides: [:], environment: [:])
            #expect(fromFile.socket.compression == WebSocketCompression(isEnabled: false, thresholdBytes: 0))
            let fromEnvironment = try await GatewaySettings.load(
                configFile: path, requireFile: true, overrides: [:], environment: ["ROOMCAST_WEBSOCKET_COMPRESSION": "on"]
            )
            #expect(fromEnvironment.socket.compression.isEnabled)
        }
    }

    @Test("canvas.preview_hz: 30 by default, set by the file or the environment")
    func previewRate() async throws {
        let defaults = try await GatewaySettings.load(configFile: "/nonexistent/roomcast.yaml", requireFile: false, overrides: [:], environment: [:])
        #expect(defaults.socket.previewRate == 30)
        try await withConfigFile("canvas:\n  preview_hz: 60\n") { path in
            let fromFile = try await GatewaySettings.load(configFile: path, requireFile: true, overrides: [:], environment: [:])
            #expect(fromFile.socket.previewRate == 60)
            let fromEnvironment = try await GatewaySettings.load(
                configFile: path, requireFile: true, overrides: [:], environment: ["ROOMCAST_CANVAS_PREVIEW_HZ": "12"]
            )
            #expect(fromEnvironment.socket.previewRate == 12)
        }
    }

    @Test("environment variables override the file, flags override both")
    func precedence() async throws {
        try await withConfigFile(sampleFile) { path in
            let environment = ["ROOMCAST_PORT": "9100", "ROOMCAST_REDIS_URL": "redis://env-redis:6390", "ROOMCAST_LOG_LEVEL": "warning"]
            let fromEnvironment = try await GatewaySettings.load(configFile: path, requireFile: true, overrides: [:], environment: environment)
            #expect(fromEnvironment.port == 9100)
            #expect(fromEnvironment.redis.endpoint.host == "env-redis")
            #expect(fromEnvironment.logLevel == .warning)
            #expect(fromEnvironment.host == "0.0.0.0")

            let fromFlags = try await GatewaySettings.load(
                configFile: path, requireFile: true, overrides: ["port": "9200", "redis.url": "redis://flag-redis"], environment: environment
            )
            #expect(fromFlags.port == 9200)
            #expect(fromFlags.redis.endpoint.host == "flag-redis")
            #expect(fromFlags.logLevel == .warning)
        }
    }

    @Test(
        "a malformed value stops start-up naming its key",
        arguments: [
            ("ROOMCAST_PORT", "abc", "port"),
            ("ROOMCAST_PORT", "70000", "port"),
            ("ROOMCAST_REDIS_URL", "http://redis", "redis.url"),
            ("ROOMCAST_REDIS_POOL_SIZE", "0", "redis.pool_size"),
            ("ROOMCAST_REDIS_COMMAND_TIMEOUT_MS", "soon", "redis.command_timeout_ms"),
            ("ROOMCAST_LOG_LEVEL", "loud", "log.level"),
            ("ROOMCAST_HOST", "", "host"),
            ("ROOMCAST_MESSAGES_KEPT_PER_ROOM", "0", "messages.kept_per_room"),
            ("ROOMCAST_WEBSOCKET_COMPRESSION", "gzip", "websocket.compression"),
            ("ROOMCAST_WEBSOCKET_COMPRESSION_THRESHOLD_BYTES", "-1", "websocket.compression_threshold_bytes"),
            ("ROOMCAST_CANVAS_PREVIEW_HZ", "0", "canvas.preview_hz"),
            ("ROOMCAST_CANVAS_PREVIEW_HZ", "241", "canvas.preview_hz"),
            ("ROOMCAST_CANVAS_PREVIEW_HZ", "fast", "canvas.preview_hz"),
        ]
    )
    func malformedValues(variable: String, value: String, key: String) async throws {
        do {
            _ = try await GatewaySettings.load(configFile: "/nonexistent.yaml", requireFile: false, overrides: [:], environment: [variable: value])
            Issue.record("\(variable)=\(value) should be refused")
        } catch let error as ConfigurationError {
            #expect(error.key == key)
            #expect(error.description.contains(variable))
        }
    }

    @Test("a Redis password never appears in a settings error")
    func passwordNotLeaked() async throws {
        do {
            _ = try await GatewaySettings.load(
                configFile: "/nonexistent.yaml", requireFile: false, overrides: [:], environment: ["ROOMCAST_REDIS_URL": "redis://:hunter2@host:99999"]
            )
            Issue.record("port 99999 should be refused")
        } catch let error as ConfigurationError {
            #expect(!error.description.contains("hunter2"))
        }
    }

    @Test("an explicitly named config file must exist")
    func missingExplicitFile() async throws {
        await #expect(throws: ConfigurationError.self) {
            _ = try await GatewaySettings.load(configFile: "/nonexistent/custom.yaml", requireFile: true, overrides: [:], environment: [:])
        }
    }

    @Test("environment variable names follow the keys")
    func environmentNames() {
        #expect(GatewaySettings.environmentName(of: "redis.url") == "ROOMCAST_REDIS_URL")
        #expect(GatewaySettings.environmentName(of: "port") == "ROOMCAST_PORT")
    }
}
