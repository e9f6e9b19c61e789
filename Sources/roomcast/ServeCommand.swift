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

    @OptionGroup var source: ConfigOptions

    @Option(name: .long, help: "Address to listen on (ROOMCAST_HOST).")
    var host: String?

    @Option(name: .long, help: "Port to listen on (ROOMCAST_PORT, default 8080).")
    var port: String?

    @Option(name: .customLong("log-level"), help: "trace, debug, info, notice, warning, error or critical (ROOMCAST_LOG_LEVEL).")
    var logLevel: String?

    @Option(name: .customLong("log-format"), help: "text or json: one JSON object per line (ROOMCAST_LOG_FORMAT, default text).")
    var logFormat: String?

    func run() async throws {
        let settings = try await source.load(overrides: [
            GatewaySettings.Key.host: host,
            GatewaySettings.Key.port: port,
            GatewaySettings.Key.logLevel: logLevel,
            GatewaySettings.Key.logFormat: logFormat,
        ])
        let level = settings.logLevel
        let format = settings.logFormat
        LoggingSystem.bootstrap { label in format.handler(label: label, level: level) }
        // Before the node makes its first instrument: those made earlier would record nowhere.
        RoomcastMetrics.bootstrap()
        var logger = Logger(label: "roomcast")
        logger.logLevel = level
        try await Gateway(settings: settings, logger: logger).run { line in
            // Written unbuffered: scripts and tests wait for this line on a pipe.
            FileHandle.standardOutput.write(Data((line + "\n").utf8))
        }
    }
}
