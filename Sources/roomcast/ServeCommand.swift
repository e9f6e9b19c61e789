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
            (ROOMCAST_PORT, ROOMCAST_REDIS_URL, ...), then these flags; later sources win. \
            `roomcast config reference` lists every setting.
            """
    )

    @OptionGroup var source: ConfigOptions

    @Option(name: .setting("host"), help: .setting("host"))
    var host: String?

    @Option(name: .setting("port"), help: .setting("port"))
    var port: String?

    @Option(name: .setting("log.level"), help: .setting("log.level"))
    var logLevel: String?

    @Option(name: .setting("log.format"), help: .setting("log.format"))
    var logFormat: String?

    func run() async throws {
        let settings = try await source.load(overrides: [
            "host": host,
            "port": port,
            "log.level": logLevel,
            "log.format": logFormat,
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
