import Foundation
import RedisClient
import RoomcastTestSupport
import Testing

/// A socket's events run in order per room, not per socket: on a Redis Cluster whose master
/// holding one room's slot hangs, the socket's events for another room go on.
@Suite("Events of one socket: in order per room", .serialized)
struct RoomOrderTests {
    /// Commands wait ten minutes (the longest the setting allows) for a master that does not
    /// answer: an event of the frozen room that held up the other room's would hold it past
    /// `finishing`'s patience (five minutes).
    static let environment = ["ROOMCAST_REDIS_COMMAND_TIMEOUT_MS": "600000"]

    @Test("a room whose master hangs holds up its own events only; once it answers, its event completes once")
    func frozenRoomDoesNotHoldOthers() async throws {
        try await TwoNodeCluster.with(mode: .cluster, environment: Self.environment) { cluster in
            let redis = try #require(cluster.redis.cluster)
            let alice = try await cluster.register("alice")
            let bob = try await cluster.register("bob")
            let alicePort = try await redis.port(servingKey: "user:{\(alice.id)}")
            // Room A on a master that holds neither Alice's keys nor room B's.
            var frozenRoom = try await cluster.createRoom(by: alice, with: [bob])
            var frozenPort = try await redis.port(servingKey: "room:{\(frozenRoom)}")
            while frozenPort == alicePort {
                frozenRoom = try await cluster.createRoom(by: alice, with: [bob])
                frozenPort = try await redis.port(servingKey: "room:{\(frozenRoom)}")
            }
            var liveRoom = try await cluster.createRoom(by: alice, with: [bob])
            while try await redis.port(servingKey: "room:{\(liveRoom)}") == frozenPort {
                liveRoom = try await cluster.createRoom(by: alice, with: [bob])
            }
            let (frozen, live) = (frozenRoom, liveRoom)
            let socket = try await cluster.connect(alice, to: cluster.node1)
            _ = try await ElementSocketTests.join(socket, frozenRoom)
            _ = try await ElementSocketTests.join(socket, liveRoom)

            let master = try #require(redis.servers.first { $0.port == frozenPort })
            await master.freeze()
            // A's event first, on the same socket, then B's: B's ack comes while A's waits.
            try await socket.sendRaw(text: #"421000["message:send",{"roomId":"\#(frozenRoom)","text":"to the frozen room"}]"#)
            let liveAck = try await finishing("the other room's message") {
                try JSONValue(try await socket.emitWithAck("message:send", #"{"roomId":"\#(live)","text":"to the live room"}"#, timeout: .seconds(600)))
            }
            #expect(liveAck["data"]["message"]["text"].stringValue == "to the live room", "\(liveAck)")
            await master.thaw()
            let late = try JSONValue(try await socket.nextAck(1000, timeout: .seconds(300)))
            #expect(late["data"]["message"]["text"].stringValue == "to the frozen room", "\(late)")
            // Sent once: the room's stream holds it once.
            let entries = try await cluster.withRedis { client in
                String(describing: try await client.send("XRANGE", "room:{\(frozen)}:stream", "-", "+"))
            }
            #expect(entries.components(separatedBy: "to the frozen room").count == 2, "\(entries)")
            _ = try await socket.close()
        }
    }
}
