import Foundation
import RedisClient
import RoomcastTestSupport

extension RedisCluster {
    /// A cluster-mode configuration with short timeouts and backoff, so failures show quickly.
    nonisolated func configuration(poolSize: Int = 1) throws -> RedisConfiguration {
        var configuration = try RedisConfiguration(url: url)
        configuration.poolSize = poolSize
        configuration.commandTimeout = .seconds(5)
        configuration.reconnectBackoff = Backoff(initial: .milliseconds(20), maximum: .milliseconds(200))
        configuration.healthCheckInterval = .milliseconds(500)
        return configuration
    }

    /// Runs `body` with a running cluster-mode client.
    nonisolated func withClusterClient<Result: Sendable>(_ body: @Sendable (RedisClusterClient) async throws -> Result) async throws -> Result {
        try await withRunning(RedisClusterClient(configuration: try configuration()), body)
    }

    /// What `redis-cli -p port` (no redirection) answers, trimmed.
    nonisolated func ask(_ port: Int, _ arguments: String...) async throws -> String {
        try await cli(port: port, arguments).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
