import Foundation

/// A `roomcast serve` process started from the built binary, as an operator would run it.
public final class GatewayProcess: Sendable {
    /// The port it listens on, read from its ready line.
    public let port: Int
    /// The child process.
    public let process: ChildProcess
    /// Where its stdout and stderr go.
    public let logPath: String

    /// Starts a node and waits for its ready line.
    /// - Parameters:
    ///   - arguments: flags after `serve`; `--port 0` is added unless a port is given.
    ///   - environment: extra environment variables.
    public init(arguments: [String], environment: [String: String] = [:], readyTimeout: Duration = .seconds(30)) async throws {
        logPath = FileManager.default.temporaryDirectory.appendingPathComponent("roomcast-gateway-\(UUID().uuidString.prefix(8)).log").path
        var arguments = ["serve"] + arguments
        if !arguments.contains("--port") { arguments += ["--port", "0"] }
        var fullEnvironment = ProcessInfo.processInfo.environment.merging(Self.testEnvironment) { $1 }
        fullEnvironment.merge(environment) { $1 }
        process = try ChildProcess(executable: try Self.binary(), arguments: arguments, environment: fullEnvironment, outputPath: logPath)
        let deadline = ContinuousClock.now + readyTimeout
        while ContinuousClock.now < deadline {
            let output = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
            if let port = Self.readyPort(in: output) {
                self.port = port
                return
            }
            if !process.isRunning {
                throw GatewayProcessError("roomcast exited before it was ready:\n\(output)")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        process.signal(SIGKILL)
        throw GatewayProcessError("roomcast printed no ready line within \(readyTimeout)")
    }

    /// What every test node gets unless a test overrides it: a JWT secret the tests share, the
    /// cheapest bcrypt cost so that registering users does not dominate test time, and REST rate
    /// limits out of the way (every test user registers from 127.0.0.1; the limits have tests
    /// of their own).
    public static let testEnvironment = [
        "ROOMCAST_JWT_SECRET": jwtSecret,
        "ROOMCAST_AUTH_BCRYPT_COST": "4",
        "ROOMCAST_RATE_LOGINS_PER_ADDRESS": "1000000",
        "ROOMCAST_RATE_LOGINS_PER_ACCOUNT": "1000000",
        "ROOMCAST_RATE_REST_MUTATIONS_PER_USER": "1000000",
    ]

    /// The HS256 secret of test nodes, for tests that forge tokens.
    public static let jwtSecret = "roomcast-test-secret-0123456789abcdefghij"

    /// Stops the node (SIGTERM) and removes its log; a test that fails keeps the log to read.
    public func stop() async {
        await process.terminate()
        try? FileManager.default.removeItem(atPath: logPath)
    }

    /// Everything the process printed so far.
    public var output: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    /// The built `roomcast` binary: `ROOMCAST_BINARY`, or the one beside the test bundle.
    public static func binary() throws -> String {
        if let path = ProcessInfo.processInfo.environment["ROOMCAST_BINARY"] { return path }
        let testBundle = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        let candidate = testBundle.appendingPathComponent("roomcast").path
        guard FileManager.default.isExecutableFile(atPath: candidate) else {
            throw GatewayProcessError("no roomcast binary at \(candidate): run `swift build --build-tests` first")
        }
        return candidate
    }

    /// Runs `roomcast` to completion (for start-up failures) and returns its exit code and output.
    public static func runToExit(arguments: [String], environment: [String: String] = [:]) async throws -> (status: Int32, output: String) {
        let logPath = FileManager.default.temporaryDirectory.appendingPathComponent("roomcast-run-\(UUID().uuidString.prefix(8)).log").path
        defer { try? FileManager.default.removeItem(atPath: logPath) }
        var fullEnvironment = ProcessInfo.processInfo.environment
        fullEnvironment.merge(environment) { $1 }
        let process = try ChildProcess(executable: try binary(), arguments: arguments, environment: fullEnvironment, outputPath: logPath)
        let status = await process.exitStatus(timeout: .seconds(30))
        return (status, (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "")
    }

    static func readyPort(in output: String) -> Int? {
        guard let line = output.split(separator: "\n").first(where: { $0.hasPrefix("roomcast ready on http://") }) else { return nil }
        let address = line.dropFirst("roomcast ready on http://".count).prefix { $0 != " " }
        return address.split(separator: ":").last.flatMap { Int($0) }
    }
}

/// A gateway process that did not start as expected.
public struct GatewayProcessError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
