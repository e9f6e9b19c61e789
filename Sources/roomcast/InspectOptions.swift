import ArgumentParser
import Foundation
import Logging
import RedisClient
import RoomcastCore
import RoomcastServer

/// What every `inspect` subcommand takes, and how it runs: settings, one Redis client, one
/// report printed as text or JSON.
struct InspectOptions: ParsableArguments {
    @OptionGroup var source: ConfigOptions

    @Flag(name: .long, help: "Print JSON (for scripts) instead of text.")
    var json = false

    /// Connects to Redis, reads one report with `read` and prints it.
    /// - Throws: `ExitCode(1)` for an unknown room or user, `ExitCode(2)` when Redis cannot be
    ///   reached or fails, after saying so on standard error.
    func run<Report: Encodable & Sendable>(
        _ read: @Sendable (Inspector) async throws(RoomcastError) -> Report,
        text: (Report) -> String
    ) async throws {
        let settings = try await source.load()
        var configuration = try settings.redisClientConfiguration()
        configuration.clientName = "roomcast-inspect"
        // Reconnect warnings would only repeat what the failure below says.
        let client = configuration.makeClient(logger: Logger(label: "redis") { _ in SwiftLogNoOpLogHandler() })
        let outcome = await withTaskGroup(of: Void.self) { group -> Result<Report, InspectFailure> in
            group.addTask { await client.run() }
            defer { group.cancelAll() }
            do throws(RedisError) {
                _ = try await client.send(RedisCommand("PING"))
            } catch {
                return .failure(InspectFailure(status: 2, message: "cannot reach Redis at \(configuration.endpoint): \(error.message)"))
            }
            do throws(RoomcastError) {
                return .success(try await read(Inspector(redis: client)))
            } catch {
                if error.code == .notFound { return .failure(InspectFailure(status: 1, message: error.message)) }
                return .failure(InspectFailure(status: 2, message: "reading Redis at \(configuration.endpoint) failed: \(error.message)"))
            }
        }
        switch outcome {
        case .success(let report):
            let output: String
            if json {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
                output = String(decoding: try encoder.encode(report), as: UTF8.self) + "\n"
            } else {
                output = text(report)
            }
            FileHandle.standardOutput.write(Data(output.utf8))
        case .failure(let failure):
            FileHandle.standardError.write(Data("roomcast inspect: \(failure.message)\n".utf8))
            throw ExitCode(failure.status)
        }
    }
}

/// Why an inspection printed nothing, and the exit status that says so.
private struct InspectFailure: Error {
    var status: Int32
    var message: String
}
