import ArgumentParser
import Foundation
import RoomcastServer

/// Where a command's settings come from: the config file and `--redis-url`, shared by `serve`
/// and `inspect` so that both read the same Redis the same way.
struct ConfigOptions: ParsableArguments {
    @Option(name: .long, help: "YAML settings file (default: config/roomcast.yaml, if present).")
    var config: String?

    @Option(name: .setting("redis.url"), help: .setting("redis.url"))
    var redisURL: String?

    /// Loads the settings: flags (`overrides` and `--redis-url`) over `ROOMCAST_*` environment
    /// variables over the config file.
    /// - Throws: `ValidationError` naming a refused setting: the operator's to fix, exit non-zero.
    func load(overrides: [String: String?] = [:]) async throws -> GatewaySettings {
        var flags = overrides.compactMapValues { $0 }
        if let redisURL { flags["redis.url"] = redisURL }
        do {
            return try await GatewaySettings.load(
                configFile: config ?? "config/roomcast.yaml",
                requireFile: config != nil,
                overrides: flags,
                environment: ProcessInfo.processInfo.environment
            )
        } catch {
            throw ValidationError("\(error)")
        }
    }
}
