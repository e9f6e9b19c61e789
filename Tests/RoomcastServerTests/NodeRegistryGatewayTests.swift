import Foundation
import RedisClient
import RoomcastCore
import RoomcastTestSupport
import Testing

/// A running `roomcast serve` keeps itself in the node registry with its socket count, and a
/// graceful shutdown takes it out at once (not one TTL later).
@Suite("Node registry of running gateways", .serialized)
struct NodeRegistryGatewayTests {
    @Test("a running node is registered with its address and socket count, and leaves on SIGTERM")
    func registerCountLeave() async throws {
        try await TestRedis.with { redis in
            let node = try await GatewayProcess(
                arguments: ["--redis-url", redis.url, "--log-level", "warning"], environment: ["ROOMCAST_NODE_TTL_MS": "3000"]
            )
            do {
                try await withClient(try redis.configuration()) { client in
                    let registry = NodeRegistry(redis: client)
                    #expect(try await eventually { try await registry.liveNodes().count == 1 })
                    let entry = try #require(try await registry.liveNodes().first)
                    #expect(entry.address == "http://127.0.0.1:\(node.port)")
                    #expect(entry.sockets == 0)
                    let ttl = try await client.send(RedisCommand("PTTL", RedisKeys.node(entry.id)), as: Int.self)
                    #expect((1...3_000).contains(ttl), "\(ttl)")

                    let alice = try await TwoNodeCluster.register("alice", on: node)
                    let first = try await SocketIOTestClient.connect(port: node.port, auth: #"{"token":"\#(alice.token)"}"#)
                    let second = try await SocketIOTestClient.connect(port: node.port, auth: #"{"token":"\#(alice.token)"}"#)
                    // Heartbeats every third of the TTL carry the count.
                    #expect(try await eventually { try await registry.node(entry.id)?.sockets == 2 })
                    _ = try await first.close()
                    #expect(try await eventually { try await registry.node(entry.id)?.sockets == 1 })
                    // Still there well past one TTL: the heartbeat keeps it. (A 3 s TTL, beaten every
                    // second: a loaded machine may stall the node for up to 2 s without it lapsing.)
                    try await Task.sleep(for: .milliseconds(4_000))
                    #expect(try await registry.node(entry.id)?.startedAt == entry.startedAt)

                    node.process.signal(SIGTERM)
                    #expect(await node.process.exitStatus(timeout: .seconds(30)) == 0)
                    _ = try? await second.waitForClose(timeout: .seconds(30))
                    #expect(try await registry.liveNodes().isEmpty)
                    #expect(try await client.send(RedisCommand("EXISTS", RedisKeys.node(entry.id)), as: Int.self) == 0)
                    #expect(try await client.send(RedisCommand("ZCARD", RedisKeys.nodeRegistry), as: Int.self) == 0)
                }
            } catch {
                await node.process.terminate()
                throw error
            }
            await node.stop()
        }
    }
}
