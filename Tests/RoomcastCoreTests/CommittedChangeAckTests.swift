import Foundation
import NIOCore
import RedisClient
import RoomcastCore
import RoomcastTestSupport
import Synchronization
import Testing

/// Once the script that applies a change has committed, the change is answered
/// as applied, even when the per-user events that follow it (`element:created:global`,
/// `room:updated` …, `UserEvents`) cannot be published. The changes run through `RoomChanges`, the
/// one place their per-user events and notifications are sent from. Here the publishing fails for
/// real: the changes run as a Redis ACL user that may write `room:*` keys only, so `user_event_publish.lua`
/// (on `user:{id}:stream`) is refused with `NOPERM`, as it fails when the user's slot is on a
/// master that has just died and the room's is not.
@Suite("A committed change is answered as applied when its per-user events cannot be published")
struct CommittedChangeAckTests {
    /// A client that may read and write `room:*` keys, read `user:*` keys (profiles) unless
    /// `readingUsers` is false, write the keys `writing` (patterns) and use every channel: it
    /// cannot write a user's event stream.
    static func withRoomOnlyClient<Result: Sendable>(
        _ server: TestRedis, readingUsers: Bool = true, writing: [String] = [],
        _ body: @Sendable (any RedisClientProtocol) async throws -> Result
    ) async throws -> Result {
        for port in server.servers.map(\.port) {
            let output = try await RedisCluster.cli(
                ["-p", "\(port)", "ACL", "SETUSER", "roomonly", "reset", "on", ">roomonly-secret", "+@all", "~room:*", "&*"]
                    + (readingUsers ? ["%R~user:*"] : []) + writing.map { "~" + $0 }
            )
            #expect(output.trimmingCharacters(in: .whitespacesAndNewlines) == "OK", "ACL SETUSER: \(output)")
        }
        let url = server.url.replacingOccurrences(of: "://", with: "://roomonly:roomonly-secret@")
        return try await withClient(try testConfiguration(url: url)) { client in try await body(client) }
    }

    @Test("element create, delete and clear answer success; the element exists once and the room hears of it")
    func elementChanges() async throws {
        try await withTestRedis { redis, server in
            let f = try await ElementStoreTests.fixture(redis)
            try await withSubscriber(server, to: [f.channel]) { inbox in
                try await Self.withRoomOnlyClient(server) { restricted in
                    // The restricted client cannot publish per-user events at all.
                    await expectRoomcastError(.internalError) {
                        try await UserEvents(redis: restricted).publish(.roomSeen, ["roomId": f.room.rawValue], to: [f.alice.id])
                    }
                    let store = RoomChanges(redis: restricted)
                    let element = try await store.createElement(try ElementStoreTests.note(), by: f.bob, in: f.room)
                    let stored = try await redis.send("ZRANGE", RedisKeys.roomZOrder(f.room), 0, -1)
                    #expect(try [String](redisReply: stored) == [element.id.rawValue])
                    let created = try await ElementStoreTests.waitForEvents(inbox, 1)
                    #expect(created.map(\.name) == ["element:created"])

                    let second = try await store.createElement(try ElementStoreTests.note(), by: f.alice, in: f.room)
                    #expect(try await store.deleteElement(second.id, by: f.alice.id, in: f.room) == 1)
                    #expect(try await store.clearRoom(f.room, by: f.bob.id) == 1)
                    let events = try await ElementStoreTests.waitForEvents(inbox, 4)
                    #expect(events.map(\.name) == ["element:created", "element:created", "element:deleted", "room:cleared"])
                }
            }
        }
    }

    @Test("room rename answers the renamed room")
    func roomRename() async throws {
        try await withTestRedis { redis, server in
            let f = try await ElementStoreTests.fixture(redis)
            try await Self.withRoomOnlyClient(server) { restricted in
                let room = try await RoomChanges(redis: restricted).renameRoom(f.room, to: "Renamed", by: f.alice.id)
                #expect(room.name == "Renamed")
                #expect(try await RoomStore(redis: redis).room(f.room)?.name == "Renamed")
            }
        }
    }

    @Test("room rename answers the renamed room with the profiles the room keeps when the participants' cannot be read")
    func roomRenameWithoutProfiles() async throws {
        try await withTestRedis { redis, server in
            let f = try await ElementStoreTests.fixture(redis)
            try await Self.withRoomOnlyClient(server, readingUsers: false) { restricted in
                let room = try await RoomChanges(redis: restricted).renameRoom(f.room, to: "Renamed", by: f.alice.id)
                #expect(room.name == "Renamed")
                #expect(Set(room.participants) == [f.alice, f.bob])
                #expect(try await RoomStore(redis: redis).room(f.room)?.name == "Renamed")
            }
        }
    }

    /// The room hashes (`room:{id}`) on every server.
    static func roomHashes(_ server: TestRedis) async throws -> Set<String> {
        var keys: Set<String> = []
        for port in server.servers.map(\.port) {
            let output = try await RedisCluster.cli(["-p", "\(port)", "--scan", "--pattern", "room:{*}"])
            keys.formUnion(output.split(whereSeparator: \.isNewline).map(String.init))
        }
        return keys
    }

    @Test("room create answers the room, listed for every participant, when only room:created cannot be published")
    func roomCreate() async throws {
        try await withTestRedis { redis, server in
            let f = try await ElementStoreTests.fixture(redis)
            try await Self.withRoomOnlyClient(server, writing: ["user:*:rooms"]) { restricted in
                let room = try await RoomChanges(redis: restricted).createRoom(by: f.alice.id, with: [f.bob.id, f.eve.id], name: "Three")
                #expect(Set(room.participants.map(\.id)) == [f.alice.id, f.bob.id, f.eve.id])
                let rooms = RoomStore(redis: redis)
                #expect(try await rooms.room(room.id)?.name == "Three")
                for user in [f.alice, f.bob, f.eve] {
                    #expect(try await rooms.roomIDs(of: user.id).contains(room.id), "\(user.username)'s list")
                }
                #expect(try await Self.roomHashes(server) == [RedisKeys.room(f.room), RedisKeys.room(room.id)])
            }
        }
    }

    @Test("room create that cannot list the room under its participants fails having created no room")
    func roomCreateUnlisted() async throws {
        try await withTestRedis { redis, server in
            let f = try await ElementStoreTests.fixture(redis)
            try await Self.withRoomOnlyClient(server) { restricted async throws in
                await expectRoomcastError(.internalError) {
                    try await RoomChanges(redis: restricted).createRoom(by: f.alice.id, with: [f.bob.id], name: nil)
                }
                #expect(try await Self.roomHashes(server) == [RedisKeys.room(f.room)])
                #expect(try await RoomStore(redis: redis).listings(of: f.alice.id).map(\.room.id) == [f.room])
            }
        }
    }

    /// A socket's events are handled in order: an ack that waited out the retries of a user
    /// whose master is down would stall that socket's changes in rooms on healthy masters too
    /// (found by `tests/e2e/test_cluster_failover.py`). With the wait and the retries set to an
    /// hour, the ack must come as soon as the first try has failed, while the retries go on.
    @Test("the ack waits for the events' first try only, not for the retries of a Redis that cannot be reached")
    func ackAfterAFailedFirstTry() async throws {
        try await RedisServer.with { server in
            // A standalone server that is gone: each try waits out the command timeout.
            var configuration = try testConfiguration(server)
            configuration.commandTimeout = .seconds(1)
            await server.kill()
            try await withClient(configuration) { client in
                let events = UserEvents(redis: client, committedAckWait: .seconds(3_600), committedRetryWindow: .seconds(3_600))
                // Not a child task: one that waits an hour would hold the test that long.
                let answered = Answered()
                Task {
                    await events.publishCommitted(.roomSeen, ["roomId": "r1"], to: [UserID("u1")!])
                    answered.flag.store(true, ordering: .relaxed)
                }
                // Far beyond the first try (its 1 s timeout), far below the hour.
                let answeredInTime = try await eventually(within: .seconds(60)) { answered.flag.load(ordering: .relaxed) }
                #expect(answeredInTime, "the ack waited for the retries")
            }
        }
    }

    private final class Answered: Sendable {
        let flag = Atomic(false)
    }
}
