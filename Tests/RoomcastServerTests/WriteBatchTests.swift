import Foundation
import RedisClient
import RoomcastCore
import RoomcastTestSupport
import SocketIO
import Testing

/// Events the subscriber reads in one go reach a socket in one flush (`LoopWriteBatcher`).
@Suite("Write batches: several events for one socket, one flush", .serialized)
struct WriteBatchTests {
    @Test("a burst published at once arrives whole and in order, in fewer flushes than frames", arguments: [nil, "1000"] as [String?])
    func burstIsCoalesced(flushDelay: String?) async throws {
        try await TestRedis.with { redis in
            let environment = flushDelay.map { ["ROOMCAST_SOCKET_FLUSH_DELAY_US": $0] } ?? [:]
            let node = try await GatewayProcess(arguments: ["--redis-url", redis.url, "--log-level", "warning"], environment: environment)
            let alice = try await TwoNodeCluster.register("alice", on: node)
            let socket = try await SocketIOTestClient.connect(port: node.port, auth: #"{"token":"\#(alice.token)"}"#)
            let before = try await MetricsEndpointTests.scrape(node)

            // One MULTI: Redis sends the 50 messages to the node's subscriber together, on the
            // node's channel of Alice's events (a session id begins with its node's id). The
            // offsets follow each other, past any real one of the user's stream.
            let nodeID = String(socket.handshake.sid.dropLast(20))
            let channel = RedisKeys.nodeEventsRoute(forUser: try #require(UserID(alice.id)), routing: NodeEventRouting(isCluster: try redis.configuration().isCluster)) + nodeID
            let count = 50
            try await withClient(try testConfiguration(try await redis.server(servingKey: channel))) { client in
                let burst = (0..<count).map { index in
                    RedisCommand("SPUBLISH", channel, #"\#(alice.id) 9999999999999-\#(index) 42["badge:updated",{"unreadCount":\#(index)}]"#)
                }
                _ = try await client.pipeline([RedisCommand("MULTI")] + burst + [RedisCommand("EXEC")])
            }
            for index in 0..<count {
                #expect(try JSONValue(try await socket.nextEvent("badge:updated")) == ["unreadCount": .number(Double(index))])
            }

            let after = try await MetricsEndpointTests.scrape(node)
            let frames = (after.value("roomcast_frames_delivered_total") ?? 0) - (before.value("roomcast_frames_delivered_total") ?? 0)
            let flushes = (after.value("roomcast_fanout_flushes_total") ?? 0) - (before.value("roomcast_fanout_flushes_total") ?? 0)
            #expect(frames == Double(count))
            // How many batches the burst took depends on how the node's reads split it; that
            // some frames shared a flush does not.
            #expect(flushes >= 1 && flushes < frames, "\(flushes) flushes for \(frames) frames")
            try await socket.close()
            await node.stop()
        }
    }
}
