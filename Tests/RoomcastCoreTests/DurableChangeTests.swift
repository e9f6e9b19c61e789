import Foundation
import RedisClient
import RoomcastCore
import RoomcastTestSupport
import Testing

/// Durable acks through the stores: with `writeDurability` set, the function calls that commit a
/// client's change wait for a replica (declared `isCommittedChange`, applied in one place), and
/// nothing else does. A frozen replica refuses the first kind `unavailable` and lets the second
/// through.
@Suite(
    "Durable acks: which functions wait for a replica", .serialized,
    .disabled(if: TestRedis.Mode.selected == .cluster, "builds a server with a replica of its own: runs in the standalone pass")
)
struct DurableChangeTests {
    @Test("a frozen replica refuses every committed change unavailable, applied on the master; presence, rate limits, notifications and reads go on")
    func onlyCommittedChangesWait() async throws {
        try await RedisServer.with { master in
            try await RedisServer.with(arguments: ["--replicaof", "127.0.0.1", "\(master.port)"]) { replica in
                #expect(try await eventually(within: .seconds(60)) {
                    try await RedisCluster.cli(["-p", "\(replica.port)", "INFO", "replication"]).contains("master_link_status:up")
                })
                // Several connections: the WAIT must follow the call on its own connection. A second
                // of patience: the changes made before the freeze must be confirmed by a replica
                // that a loaded machine may keep waiting for longer than a fraction of one.
                var configuration = try testConfiguration(master, poolSize: 4)
                configuration.writeDurability = .replicas(1, timeout: .seconds(1))
                try await withClient(configuration) { redis in
                    let users = UserStore(redis: redis)
                    let alice = try await users.create(username: "alice", passwordHash: "h", displayName: "Alice")
                    let bob = try await users.create(username: "bob", passwordHash: "h", displayName: nil)
                    let rooms = RoomStore(redis: redis)
                    let elements = ElementStore(redis: redis)
                    let room = try await rooms.create(by: alice.id, with: [bob.id], name: "before")
                    let note = try await elements.create(try ElementStoreTests.note(), by: alice, in: room.id)
                    let other = try await elements.create(try ElementStoreTests.note(), by: alice, in: room.id)

                    await replica.freeze()
                    func refused(_ what: String, _ change: () async throws -> Void) async {
                        do {
                            try await change()
                            Issue.record("\(what) was acknowledged while the only replica was frozen")
                        } catch let error as RoomcastError {
                            #expect(error.code == .unavailable && error.message.contains("replica"), "\(what): \(error)")
                        } catch {
                            Issue.record("\(what): \(error)")
                        }
                    }
                    await refused("room create") { _ = try await rooms.create(by: alice.id, with: [bob.id], name: nil) }
                    await refused("room rename") { _ = try await rooms.rename(room.id, to: "after", by: alice.id) }
                    await refused("message send") { _ = try await MessageStore(redis: redis).send("hi", from: alice, to: room.id) }
                    await refused("element create") { _ = try await elements.create(try ElementStoreTests.note(), by: alice, in: room.id) }
                    await refused("element update") {
                        _ = try await elements.update(note.id, with: try ElementStoreTests.changes(#"{"positionX":5}"#), by: alice.id, in: room.id)
                    }
                    await refused("element transform") {
                        _ = try await elements.transform(note.id, with: try ElementStoreTests.transform(#"{"rotation":5}"#), by: alice.id, in: room.id)
                    }
                    await refused("element front") { _ = try await elements.bringToFront(note.id, by: alice.id, in: room.id) }
                    await refused("reaction toggle") { _ = try await ReactionStore(redis: redis).toggle(on: note.id, by: bob, in: room.id) }
                    await refused("element delete") { _ = try await elements.delete(other.id, by: alice.id, in: room.id) }
                    await refused("room clear") { _ = try await elements.clear(room.id, by: alice.id) }
                    // The master applied the last of them all the same.
                    #expect(try await redis.send("ZCARD", RedisKeys.roomZOrder(room.id)) == .integer(0))

                    // The node's own bookkeeping and the reads answer with the master alone.
                    let presence = PresenceStore(redis: redis)
                    try await presence.join(room.id, user: bob.id, socket: "n1-s1")
                    try await presence.leave(room.id, user: bob.id, socket: "n1-s1")
                    _ = try await NotificationStore(redis: redis).create(NotificationDraft(type: "service.ping", title: "Hello", body: ""), for: bob.id)
                    try await RateLimiter(redis: redis).hit("durable-test", .init(requests: 10, per: .seconds(60)), what: "test")
                    _ = try await elements.snapshot(of: room.id, for: alice.id)
                    _ = try await rooms.room(room.id)
                    await replica.thaw()
                }
            }
        }
    }
}
