import Foundation
import RedisClient
import RoomcastCore
import RoomcastTestSupport
import Testing

/// Element scripts while their room's slot is being moved between masters (what
/// `redis-cli --cluster reshard` does key by key): Redis must refuse them before their first
/// write, never fail them halfway, so a refused mutation changed nothing and says `unavailable`.
/// Today Redis refuses them all up front with `TRYAGAIN`, as the room's channel, which is never a
/// key, is among their declared keys (`_shared.lua`); this fails if a script ever runs halfway.
@Suite("Element scripts on a Redis Cluster whose slot is migrating", .serialized)
struct ClusterMigrationTests {
    /// What a mutation may have changed: the element, its reactions, the stack, the room's
    /// counters and its event stream.
    struct RoomState: Equatable {
        var element: [String: String]
        var reactions: [String: String]
        var stack: [String]
        var room: [String: String]
        var events: Int
    }

    static func state(_ redis: any RedisClientProtocol, _ f: ElementStoreTests.Fixture, _ element: ElementID) async throws -> RoomState {
        func hash(_ key: String) async throws -> [String: String] { try await LiveFixture.hash(redis, key) }
        return RoomState(
            element: try await hash(RedisKeys.element(element, in: f.room)),
            reactions: try await hash(RedisKeys.elementReactions(element, in: f.room)),
            stack: try await redis.send(RedisCommand("ZRANGE", RedisKeys.roomZOrder(f.room), 0, -1), as: [String].self),
            room: try await hash(RedisKeys.room(f.room)),
            events: try await redis.send(RedisCommand("XLEN", RedisKeys.roomStream(f.room)), as: Int.self)
        )
    }

    @Test("every element mutation is refused as unavailable with nothing changed, and runs once the slot is stable")
    func refusedBeforeTheFirstWrite() async throws {
        try await RedisCluster.with { cluster in
            var configuration = try testConfiguration(url: cluster.url)
            configuration.commandTimeout = .seconds(10)
            try await withClient(configuration) { redis in
                let f = try await ElementStoreTests.fixture(redis)
                let reactions = ReactionStore(redis: redis)
                let element = try await f.store.create(try ElementStoreTests.note(), by: f.alice, in: f.room)
                let other = try await f.store.create(try ElementStoreTests.note(), by: f.bob, in: f.room)

                // The room's slot starts migrating to another master; no key has moved yet.
                let key = RedisKeys.room(f.room)
                let source = try await cluster.port(servingKey: key)
                let target = try #require(cluster.ports.first { $0 != source })
                let slot = try await cluster.cli(port: source, ["CLUSTER", "KEYSLOT", key]).trimmingCharacters(in: .whitespacesAndNewlines)
                let sourceID = try await cluster.nodeID(port: source)
                let targetID = try await cluster.nodeID(port: target)
                _ = try await cluster.cli(port: target, ["CLUSTER", "SETSLOT", slot, "IMPORTING", sourceID])
                _ = try await cluster.cli(port: source, ["CLUSTER", "SETSLOT", slot, "MIGRATING", targetID])

                let before = try await Self.state(redis, f, element.id)
                await expectRoomcastError(.unavailable) {
                    try await f.store.transform(element.id, with: try ElementStoreTests.transform(#"{"rotation":45}"#), by: f.alice.id, in: f.room)
                }
                await expectRoomcastError(.unavailable) {
                    try await f.store.update(element.id, with: try ElementStoreTests.changes(#"{"positionX":5}"#), by: f.alice.id, in: f.room)
                }
                await expectRoomcastError(.unavailable) { try await f.store.bringToFront(element.id, by: f.alice.id, in: f.room) }
                await expectRoomcastError(.unavailable) { try await reactions.toggle(on: element.id, by: f.bob, in: f.room) }
                await expectRoomcastError(.unavailable) { try await f.store.create(try ElementStoreTests.note(), by: f.alice, in: f.room) }
                await expectRoomcastError(.unavailable) { try await f.store.delete(other.id, by: f.alice.id, in: f.room) }
                await expectRoomcastError(.unavailable) { try await f.store.clear(f.room, by: f.alice.id) }
                #expect(try await Self.state(redis, f, element.id) == before)

                // The migration is called off: the same mutations go through.
                _ = try await cluster.cli(port: source, ["CLUSTER", "SETSLOT", slot, "STABLE"])
                _ = try await cluster.cli(port: target, ["CLUSTER", "SETSLOT", slot, "STABLE"])
                let turned = try await f.store.transform(element.id, with: try ElementStoreTests.transform(#"{"rotation":45}"#), by: f.alice.id, in: f.room)
                #expect(turned.rotation == 45)
                #expect(try await reactions.toggle(on: element.id, by: f.bob, in: f.room).elementStats.totalReactions == 1)
                #expect(try await f.store.clear(f.room, by: f.alice.id) == 2)
            }
        }
    }
}
