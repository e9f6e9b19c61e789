import Foundation
import RedisClient
import RoomcastCore
import RoomcastTestSupport
import Testing

/// A node leaves the registry on SIGTERM even when Redis just dropped its connections.
@Suite("Node registry after a Redis blip")
struct NodeRegistryBlipTests {
    @Test("SIGTERM right after the node's Redis connections were killed still removes its entry")
    func leaveAfterBlip() async throws {
        try await TestRedis.with { redis in
            // A TTL far longer than the test: only the removal can take the entry out.
            let node = try await GatewayProcess(
                arguments: ["--redis-url", redis.url, "--log-level", "warning"], environment: ["ROOMCAST_NODE_TTL_MS": "600000"]
            )
            do {
                try await withClient(try redis.configuration()) { client in
                    let registry = NodeRegistry(redis: client)
                    #expect(try await eventually { try await registry.liveNodes().count == 1 })
                    let entry = try #require(try await registry.liveNodes().first)
                    try await redis.onEveryServer { server in
                        _ = try await server.send(RedisCommand("CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes"))
                    }
                    node.process.signal(SIGTERM)
                    #expect(await node.process.exitStatus(timeout: .seconds(30)) == 0)
                    #expect(try await client.send(RedisCommand("EXISTS", RedisKeys.node(entry.id)), as: Int.self) == 0)
                    #expect(try await client.send(RedisCommand("ZSCORE", RedisKeys.nodeRegistry, entry.id.rawValue), as: String?.self) == nil)
                }
            } catch {
                await node.process.terminate()
                throw error
            }
            await node.stop()
        }
    }
}
