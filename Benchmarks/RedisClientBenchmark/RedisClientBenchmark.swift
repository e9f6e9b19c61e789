import Foundation
import RedisClient

/// Measures the client's pipelined throughput against a running Redis, next to which
/// `scripts/bench-redis.sh` prints `redis-benchmark -P 16` on the same machine.
///
/// Usage: RedisClientBenchmark [redis-url] [seconds] [clients] [pipeline]
@main
struct RedisClientBenchmark {
    static func main() async throws {
        let arguments = CommandLine.arguments.dropFirst().map { $0 }
        let url = arguments.first ?? "redis://127.0.0.1:6379"
        let seconds = arguments.count > 1 ? Int(arguments[1]) ?? 5 : 5
        let clients = arguments.count > 2 ? Int(arguments[2]) ?? 50 : 50
        let depth = arguments.count > 3 ? Int(arguments[3]) ?? 16 : 16

        var configuration = try RedisConfiguration(url: url)
        configuration.poolSize = 2
        configuration.commandTimeout = .seconds(10)
        let client = RedisClient(configuration: configuration)
        let runner = Task { await client.run() }
        defer { runner.cancel() }
        guard await waitForConnection(client) else {
            print("cannot reach \(url)")
            return
        }

        print("RedisClient benchmark: \(clients) concurrent callers, \(seconds) s per test, url \(url)")
        for (label, command) in [("PING", RedisCommand("PING")), ("INCR", RedisCommand("INCR", "bench:counter"))] {
            let batch = Array(repeating: command, count: depth)
            let pipelined = try await measure(seconds: seconds, clients: clients) {
                _ = try await client.pipeline(batch)
                return depth
            }
            report("\(label) pipeline(\(depth))", pipelined)
            let single = try await measure(seconds: seconds, clients: clients) {
                _ = try await client.send(command)
                return 1
            }
            report("\(label) send, concurrent", single)
        }
    }

    /// Runs `operation` from `clients` tasks until `seconds` pass; returns operations per second.
    static func measure(seconds: Int, clients: Int, _ operation: @escaping @Sendable () async throws -> Int) async throws -> Double {
        let start = ContinuousClock.now
        let deadline = start + .seconds(seconds)
        let total = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<clients {
                group.addTask {
                    var count = 0
                    while ContinuousClock.now < deadline {
                        count += try await operation()
                    }
                    return count
                }
            }
            return try await group.reduce(0, +)
        }
        let elapsed = ContinuousClock.now - start
        return Double(total) / (Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
    }

    static func report(_ label: String, _ rate: Double) {
        let padded = label.padding(toLength: 28, withPad: " ", startingAt: 0)
        print("\(padded) \(String(format: "%12.0f", rate)) requests per second")
    }

    static func waitForConnection(_ client: RedisClient) async -> Bool {
        for _ in 0..<50 {
            if await client.ping() { return true }
            try? await Task.sleep(for: .milliseconds(100))
        }
        return false
    }
}
