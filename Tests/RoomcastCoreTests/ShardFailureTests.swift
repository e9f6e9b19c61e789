import Foundation
import NIOCore
import RedisClient
import RoomcastCore
import RoomcastTestSupport
import Testing

/// A shard's failure on a real Redis Cluster, configured as `config/redis-cluster.conf`
/// configures a deployment's: the master holding a user's slot is SIGKILLed (or frozen), the room's master
/// is healthy. Changes in the room are answered as applied and heard by the room, once each,
/// before and after the other masters flag the dead one as failing (`cluster-node-timeout`,
/// 2 s in the test cluster), and none waits for the dead master.
@Suite("One Redis Cluster master lost: rooms on the other masters go on", .serialized)
struct ShardFailureTests {
    /// The options of `config/redis-cluster.conf` that decide what the other masters do while
    /// one is down, as `redis-server` arguments.
    static func deployedClusterOptions() throws -> [String] {
        let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("config/redis-cluster.conf")
        let decisive: Set<Substring> = ["cluster-require-full-coverage", "cluster-allow-reads-when-down", "cluster-allow-pubsubshard-when-down"]
        var options: [String] = []
        for line in try String(contentsOf: file, encoding: .utf8).split(separator: "\n") {
            let words = line.split(separator: " ")
            if words.count == 2, decisive.contains(words[0]) { options += ["--" + words[0], String(words[1])] }
        }
        return options
    }

    /// Alice and Bob, and a room of theirs whose keys live on another master than Bob's: the
    /// master (port) to kill.
    static func roomOffParticipantsMaster(
        _ client: any RedisClientProtocol, _ cluster: RedisCluster
    ) async throws -> (alice: User, bob: User, room: Room, bobPort: Int) {
        let users = UserStore(redis: client)
        let alice = try await users.create(username: "alice", passwordHash: "h", displayName: nil)
        let bob = try await users.create(username: "bob", passwordHash: "h", displayName: nil)
        let bobPort = try await cluster.port(servingKey: RedisKeys.user(bob.id))
        var room = try await RoomStore(redis: client).create(by: alice.id, with: [bob.id], name: nil)
        while try await cluster.port(servingKey: RedisKeys.room(room.id)) == bobPort {
            room = try await RoomStore(redis: client).create(by: alice.id, with: [bob.id], name: nil)
        }
        return (alice, bob, room, bobPort)
    }

    /// A client whose commands wait an hour for a master that does not answer: a create or a send
    /// that waited for one would outlast ``finishing(_:within:_:)``'s patience by far; one that does
    /// not wait ends within it on any machine. A killed master refuses connections at once, so
    /// only the frozen one (``userEventWhileMasterHangs()``) can catch an ack that waits for it
    /// (``UserEvents/committedAckWait``); the killed ones catch any other wait for the dead master.
    static func configuration(_ redis: TestRedis) throws -> RedisConfiguration {
        var configuration = try redis.configuration()
        configuration.commandTimeout = .seconds(3_600)
        return configuration
    }

    @Test("element create and message send in a room whose master is healthy, while a participant's master is dead")
    func roomOnHealthyMaster() async throws {
        try await TestRedis.with(mode: .cluster, arguments: try Self.deployedClusterOptions()) { redis in
            let cluster = try #require(redis.cluster)
            try await withClient(try Self.configuration(redis)) { client in
                let (alice, bob, room, bobPort) = try await Self.roomOffParticipantsMaster(client, cluster)
                let channel = RedisKeys.roomChannel(room.id)
                try await withSubscriber(redis, to: [channel]) { inbox in
                    let elements = ElementStore(redis: client)
                    let messages = MessageStore(redis: client)
                    let dead = try #require(cluster.servers.first { $0.port == bobPort })
                    await dead.kill()
                    var created: [ElementID] = []
                    var sent = 0
                    let end = ContinuousClock.now + .seconds(5)
                    while ContinuousClock.now < end {
                        let text = "message \(sent)"
                        created.append(try await finishing("a create and a send") {
                            let id = try await elements.create(try ElementStoreTests.note(), by: alice, in: room.id).id
                            _ = try await messages.send(text, from: alice, to: room.id)
                            return id
                        })
                        sent += 1
                        try await Task.sleep(for: .milliseconds(100))
                    }
                    let stored = try [String](redisReply: try await client.send("ZRANGE", RedisKeys.roomZOrder(room.id), 0, -1))
                    #expect(stored == created.map(\.rawValue))
                    // The room's stream, which a node's gap repair and a rejoining client's replay
                    // read, holds every change once.
                    let origin = try #require(StreamOffset("0-0"))
                    let logged = try #require(try await RoomEventLog(redis: client).events(of: room.id, after: origin))
                    let names = try logged.map { try Publication.parse($0.frame).name }
                    #expect(names.filter { $0 == "element:created" }.count == created.count)
                    #expect(names.filter { $0 == "message:new" }.count == sent)
                    // Live delivery to this room's subscribers goes on: the subscriber's link to
                    // the room's master is not the dead one's.
                    let heard = try await inbox.publications(created.count + sent, on: channel, within: .seconds(30))
                    #expect(heard.count == created.count + sent)
                }
            }
        }
    }

    @Test("a REST change by a user whose rate-limit counter lives on the dead master, in a room on a healthy one: not refused, sent, heard")
    func rateLimitCounterOnDeadMaster() async throws {
        try await TestRedis.with(mode: .cluster, arguments: try Self.deployedClusterOptions()) { redis in
            let cluster = try #require(redis.cluster)
            try await withClient(try Self.configuration(redis)) { client in
                let alice = try await UserStore(redis: client).create(username: "alice", passwordHash: "h", displayName: nil)
                // The scope of RequestLimits.checkMutation(by:), which every REST change passes first.
                let scope = "rest:\(alice.id)"
                let counterPort = try await cluster.port(servingKey: RedisKeys.rateLimit(scope))
                var room = try await RoomStore(redis: client).create(by: alice.id, with: [], name: nil)
                while try await cluster.port(servingKey: RedisKeys.room(room.id)) == counterPort {
                    room = try await RoomStore(redis: client).create(by: alice.id, with: [], name: nil)
                }
                let roomID = room.id
                let channel = RedisKeys.roomChannel(roomID)
                try await withSubscriber(redis, to: [channel]) { inbox in
                    let limiter = RateLimiter(redis: client)
                    let limit = RateLimiter.Limit(requests: 120, per: .seconds(60))
                    try await limiter.hit(scope, limit, what: "changes through the REST API")
                    let dead = try #require(cluster.servers.first { $0.port == counterPort })
                    await dead.kill()
                    try await finishing("the limit and the send") {
                        try await limiter.hit(scope, limit, what: "changes through the REST API")
                        _ = try await MessageStore(redis: client).send("while a master is down", from: alice, to: roomID)
                    }
                    let heard = try await inbox.publications(1, on: channel, within: .seconds(30))
                    #expect(try heard.map { try $0.event().name } == ["message:new"])
                }
            }
        }
    }

    @Test("a participant's element:created:global that could not be published by the ack is published once that master is back")
    func userEventAfterMasterReturns() async throws {
        try await TestRedis.with(mode: .cluster, arguments: try Self.deployedClusterOptions()) { redis in
            let cluster = try #require(redis.cluster)
            try await withClient(try Self.configuration(redis)) { client in
                let (alice, bob, room, bobPort) = try await Self.roomOffParticipantsMaster(client, cluster)
                let dead = try #require(cluster.servers.first { $0.port == bobPort })
                await dead.kill()
                let element = try await finishing("a create") {
                    try await RoomChanges(redis: client).createElement(try ElementStoreTests.note(), by: alice, in: room.id)
                }
                // Back within UserEvents.committedRetryWindow, empty (no persistence in tests).
                try await dead.start()
                try await cluster.waitUntilStable()
                let stream = RedisKeys.userStream(bob.id)
                let published = try await eventually(within: .seconds(15)) {
                    (try? await client.send(RedisCommand("XLEN", stream), as: Int.self)) == 1
                }
                #expect(published)
                let entries = try await client.send("XRANGE", stream, "-", "+")
                let text = String(describing: entries)
                #expect(text.contains("element:created:global") && text.contains(element.id.rawValue), "\(text)")
            }
        }
    }

    @Test("a participant's master that hangs, its connections open: the create's ack does not wait for it, and the event is published once it answers")
    func userEventWhileMasterHangs() async throws {
        try await TestRedis.with(mode: .cluster, arguments: try Self.deployedClusterOptions()) { redis in
            let cluster = try #require(redis.cluster)
            try await withClient(try Self.configuration(redis)) { client in
                let (alice, bob, room, bobPort) = try await Self.roomOffParticipantsMaster(client, cluster)
                let frozen = try #require(cluster.servers.first { $0.port == bobPort })
                await frozen.freeze()
                // Bob's event waits for the frozen master for as long as the client's commands
                // wait (an hour here): the ack must go after UserEvents.committedAckWait.
                let element = try await finishing("a create") {
                    try await RoomChanges(redis: client).createElement(try ElementStoreTests.note(), by: alice, in: room.id)
                }
                await frozen.thaw()
                try await cluster.waitUntilStable()
                // Bob's stream holds this event once.
                let stream = RedisKeys.userStream(bob.id)
                let published = try await eventually(within: .seconds(60)) {
                    let entries = try? await client.send("XRANGE", stream, "-", "+")
                    return String(describing: entries).contains(element.id.rawValue)
                }
                let entries = String(describing: try await client.send("XRANGE", stream, "-", "+"))
                #expect(published, "\(entries)")
                #expect(entries.components(separatedBy: "element:created:global").count == 2, "\(entries)")
            }
        }
    }
}
