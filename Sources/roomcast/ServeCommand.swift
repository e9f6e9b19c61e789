import ArgumentParser
import Foundation
import Logging
import RoomcastServer

/// `roomcast serve`: runs one gateway node until SIGTERM or SIGINT.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run one gateway node.",
        discussion: """
            Settings come from the config file, then ROOMCAST_* environment variables \
            (ROOMCAST_PORT, ROOMCAST_REDIS_URL, ...), then these flags; later sources win.
            """
    )

    @Option(name: .long, help: "YAML settings file (default: config/roomcast.yaml, if present).")
    var config: String?

    @Option(name: .long, help: "Address to listen on (ROOMCAST_HOST).")
    var host: String?

    @Option(name: .long, help: "Port to listen on (ROOMCAST_PORT, default 8080).")
    var port: String?

    @Option(name: .customLong("redis-url"), help: "redis://[user:password@]host:port[/db] (ROOMCAST_REDIS_URL).")
    var redisURL: String?

    @Option(name: .customLong("log-level"), help: "trace, debug, info, notice, warning, error or critical (ROOMCAST_LOG_LEVEL).")
    var logLevel: String?

    func run() async throws {
        let overrides = [
            GatewaySettings.Key.host: host,
            GatewaySettings.Key.port: port,
            GatewaySettings.Key.redisURL: redisURL,
            GatewaySettings.Key.logLevel: logLevel,
        ].compactMapValues { $0 }
        let settings: GatewaySettings
        do {
            settings = try await GatewaySettings.load(
                configFile: config ?? "config/roomcast.yaml",
                requireFile: config != nil,
                overrides: overrides,
                environment: ProcessInfo.processInfo.environment
            )
        } catch {
            // A refused setting is the operator's to fix: say which, and exit non-zero.
            throw ValidationError("\(error)")
        }
        let level = settings.logLevel
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        var logger = Logger(label: "roomcast")
        logger.logLevel = level
        try await Gateway(settings: settings, logger: logger).run { line in
            // Written unbuffered: scripts and tests wait for this line on a pipe.
            FileHandle.standardOutput.write(Data((line + "\n").utf8))
        }
    }
}
