import Foundation
import NIOCore
@testable import RedisClient
import RoomcastTestSupport
import Synchronization
import Testing

@Suite("RedisClusterClient against a 3-master Redis Cluster", .serialized)
struct RedisClusterClientTests {
    @Test("commands go to the master of their slot, a pipeline spans masters, cross-slot commands are refused")
    func routes() async throws {
        try await RedisCluster.with { cluster in
            try await cluster.withClusterClient { client in
                let keys = (0..<30).map { "room:{r\($0)}:name" }
                for key in keys {
                    #expect(try await client.send("SET", key, "v-\(key)") == .status("OK"))
                }
                // Each key sits on exactly the master its slot names; all three hold some.
                var used: Set<Int> = []
                for key in keys {
                    let port = try await cluster.port(servingKey: key)
                    used.insert(port)
                    #expect(try await cluster.ask(port, "GET", key) == "v-\(key)")
                }
                #expect(used.count == 3)

                let replies = try await client.pipeline(keys.map { RedisCommand("GET", $0) } + [RedisCommand("PING")] + keys.map { RedisCommand("STRLEN", $0) })
                #expect(replies.prefix(30).map(\.string) == keys.map { "v-\($0)" })
                #expect(replies[30] == .status("PONG"))
                #expect(replies.suffix(30) == keys.map { .integer(Int64("v-\($0)".utf8.count)) })

                let crossSlot = await #expect(throws: RedisError.self) { try await client.send("DEL", "user:{a}", "user:{b}") }
                #expect(crossSlot?.code == .crossSlot)
                #expect(try await client.send("DEL", "user:{a}:x", "user:{a}:y") == .integer(0))
            }
        }
    }

    static let library = RedisFunctionLibrary(
        name: "test",
        lua: """
            redis.register_function('incr_both_' .. VERSION, function(keys) redis.call('INCR', keys[1]); return redis.call('INCR', keys[2]) end)
            redis.register_function('set_fresh_' .. VERSION, function(keys, args) return redis.call('SET', keys[1], args[1]) end)
            redis.register_function('incr_one_' .. VERSION, function(keys) return redis.call('INCR', keys[1]) end)
            """
    )

    static func incrementBoth(_ keys: [String]) -> RedisFunctionCall {
        RedisFunctionCall("incr_both", in: library, keys: keys, arguments: [], isReadOnly: false)
    }

    static func setFresh(_ key: String, to value: String) -> RedisFunctionCall {
        RedisFunctionCall("set_fresh", in: library, keys: [key], arguments: [value], isReadOnly: false)
    }

    @Test("functions run on the master of their keys and the library is loaded again there after FUNCTION FLUSH")
    func functions() async throws {
        try await RedisCluster.with { cluster in
            try await cluster.withClusterClient { client in
                try await client.load(Self.library)
                for port in cluster.ports {
                    #expect(try await cluster.ask(port, "FUNCTION", "LIST", "LIBRARYNAME", Self.library.name).contains(Self.library.name))
                }
                for room in 0..<9 {
                    #expect(try await client.call(Self.incrementBoth(["room:{s\(room)}:a", "room:{s\(room)}:b"])) == .integer(1))
                }
                for port in cluster.ports { _ = try await cluster.ask(port, "FUNCTION", "FLUSH") }
                for room in 0..<9 {
                    #expect(try await client.call(Self.incrementBoth(["room:{s\(room)}:a", "room:{s\(room)}:b"])) == .integer(2))
                }
                let crossSlot = await #expect(throws: RedisError.self) { try await client.call(Self.incrementBoth(["user:{a}", "push:{outbox}"])) }
                #expect(crossSlot?.code == .crossSlot)
            }
        }
    }

    /// Starts a migration of `key`'s slot from the master serving it to the master on `target`;
    /// the key is on neither, so the source answers `ASK` and the target is asked.
    static func migrate(_ key: String, in cluster: RedisCluster, to target: Int) async throws -> (source: Int, slot: String) {
        let source = try await cluster.port(servingKey: key)
        let slot = try await cluster.cli(port: source, ["CLUSTER", "KEYSLOT", key]).trimmingCharacters(in: .whitespacesAndNewlines)
        let sourceID = try await cluster.nodeID(port: source)
        let targetID = try await cluster.nodeID(port: target)
        _ = try await cluster.cli(port: target, ["CLUSTER", "SETSLOT", slot, "IMPORTING", sourceID])
        _ = try await cluster.cli(port: source, ["CLUSTER", "SETSLOT", slot, "MIGRATING", targetID])
        return (source, slot)
    }

    /// The importing master answers `Function not found`: a load routed by the keys' slot would
    /// go to the source master, which has the library, and the call would fail again.
    @Test("a library the importing master lacks is loaded on that master, the one that answered, during a migration (ASK, then Function not found)")
    func libraryMissingOnTheImportingMaster() async throws {
        try await RedisCluster.with { cluster in
            try await cluster.withClusterClient { client in
                let key = "room:{ask-nofunction}:fresh"
                let source = try await cluster.port(servingKey: key)
                let target = try #require(cluster.ports.first { $0 != source })
                // Only the slot's master has the library, as after a call loaded it there.
                #expect(try await cluster.ask(source, "FUNCTION", "LOAD", Self.library.source) == Self.library.name)
                _ = try await Self.migrate(key, in: cluster, to: target)

                #expect(try await client.call(Self.setFresh(key, to: "moved")) == .status("OK"))
                #expect(try await cluster.ask(target, "FUNCTION", "LIST", "LIBRARYNAME", Self.library.name).contains(Self.library.name))
            }
        }
    }

    /// A master just added to the cluster (no slot yet, so in no slot map) imports a slot: it
    /// lacks the library, and no load routed by slot, nor one sent to every master of the map,
    /// reaches it.
    @Test("a new master importing a slot, in no slot map yet, is given the library by the call it refused")
    func libraryMissingOnANewMaster() async throws {
        try await RedisCluster.with { cluster in
            let added = try await RedisServer(arguments: ["--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf", "--cluster-node-timeout", "2000"])
            do {
                _ = try await RedisCluster.cli(["--cluster", "add-node", "127.0.0.1:\(added.port)", "127.0.0.1:\(cluster.ports[0])"])
                let addedID = try await cluster.nodeID(port: added.port)
                // Every master knows the new one, and it knows the slot map (until then it answers CLUSTERDOWN).
                #expect(try await eventually(within: .seconds(30)) {
                    var known = try await cluster.ask(added.port, "CLUSTER", "INFO").contains("cluster_state:ok")
                    for port in cluster.ports + [added.port] {
                        let nodes = try await cluster.ask(port, "CLUSTER", "NODES")
                        known = known && nodes.contains(addedID) && nodes.split(separator: "\n").count == 4
                    }
                    return known
                })
                try await cluster.withClusterClient { client in
                    try await client.load(Self.library)
                    #expect(try await cluster.ask(added.port, "FUNCTION", "LIST").isEmpty)
                    let key = "room:{new-master}:fresh"
                    _ = try await Self.migrate(key, in: cluster, to: added.port)

                    #expect(try await client.call(Self.setFresh(key, to: "on the new master")) == .status("OK"))
                    #expect(try await cluster.ask(added.port, "FUNCTION", "LIST", "LIBRARYNAME", Self.library.name).contains(Self.library.name))
                }
            } catch {
                await added.destroy()
                throw error
            }
            await added.destroy()
        }
    }

    @Test("after a reshard, MOVED sends commands to the new master and the slot map follows")
    func followsMoved() async throws {
        try await RedisCluster.with { cluster in
            try await cluster.withClusterClient { client in
                let keys = (0..<200).map { "user:{m\($0)}" }
                _ = try await client.pipeline(keys.map { RedisCommand("SET", $0, $0) })
                let (from, to) = (cluster.ports[0], cluster.ports[1])
                try await cluster.reshard(fromPort: from, toPort: to, slots: 2000)
                // The client's map is stale: every key still reads right.
                for key in keys {
                    #expect(try await client.send("GET", key).string == key)
                }
                let replies = try await client.pipeline(keys.map { RedisCommand("GET", $0) })
                #expect(replies.map(\.string) == keys)
                // And the map was read again: the moved slots now point at the new master.
                #expect(try await eventually {
                    guard let topology = client.topology else { return false }
                    return topology.slots(of: RedisEndpoint(host: "127.0.0.1", port: to)).count == 5461 + 2000
                        || topology.slots(of: RedisEndpoint(host: "127.0.0.1", port: to)).count == 5462 + 2000
                })
            }
        }
    }

    @Test("during a migration, ASK sends ASKING then the command to the importing master")
    func followsAsk() async throws {
        try await RedisCluster.with { cluster in
            try await cluster.withClusterClient { client in
                let key = "room:{ask}:a"
                #expect(try await client.send("SET", key, "old") == .status("OK"))
                let source = try await cluster.port(servingKey: key)
                let target = cluster.ports.first { $0 != source }!
                let slot = try await cluster.ask(source, "CLUSTER", "KEYSLOT", key)
                let sourceID = try await cluster.nodeID(port: source)
                let targetID = try await cluster.nodeID(port: target)
                #expect(try await cluster.ask(target, "CLUSTER", "SETSLOT", slot, "IMPORTING", sourceID) == "OK")
                #expect(try await cluster.ask(source, "CLUSTER", "SETSLOT", slot, "MIGRATING", targetID) == "OK")
                // A key the source does not hold is answered with ASK: it is written on the target.
                let fresh = "room:{ask}:b"
                #expect(try await client.send("SET", fresh, "new") == .status("OK"))
                #expect(try await cluster.ask(target, "CLUSTER", "COUNTKEYSINSLOT", slot) == "1")
                #expect(try await client.send("GET", fresh).string == "new")
                #expect(try await client.send("GET", key).string == "old")
                // The map was not changed by ASK.
                #expect(client.topology?.master(for: HashSlot(key: key))?.port == source)
            }
        }
    }

    @Test("a reshard during traffic loses no acknowledged write and fails no command")
    func reshardUnderTraffic() async throws {
        try await RedisCluster.with { cluster in
            try await cluster.withClusterClient { client in
                let keys = (0..<40).map { "room:{t\($0)}:n" }
                let (acknowledged, failures) = try await withThrowingTaskGroup(of: ([String: Int], Int).self) { group in
                    let stop = ManagedAtomicFlag()
                    for worker in 0..<4 {
                        group.addTask {
                            var counts: [String: Int] = [:]
                            var failures = 0
                            var index = worker
                            while !stop.isSet {
                                let key = keys[index % keys.count]
                                index += 7
                                do {
                                    _ = try await client.call(Self.incrementOne(key))
                                    counts[key, default: 0] += 1
                                } catch {
                                    failures += 1
                                }
                            }
                            return (counts, failures)
                        }
                    }
                    try await Task.sleep(for: .milliseconds(200))
                    try await cluster.reshard(fromPort: cluster.ports[0], toPort: cluster.ports[1], slots: 3000)
                    try await Task.sleep(for: .milliseconds(200))
                    stop.set()
                    var total: [String: Int] = [:]
                    var failures = 0
                    for try await (counts, failed) in group {
                        total.merge(counts, uniquingKeysWith: +)
                        failures += failed
                    }
                    return (total, failures)
                }
                #expect(failures == 0)
                #expect(acknowledged.values.reduce(0, +) > 100)
                for key in keys {
                    #expect(try await client.send("GET", key).string.flatMap { Int($0) } ?? 0 == acknowledged[key, default: 0])
                }
            }
        }
    }

    private static func incrementOne(_ key: String) -> RedisFunctionCall {
        RedisFunctionCall("incr_one", in: library, keys: [key], arguments: [], isReadOnly: false)
    }
}

/// A flag set once by one task and read by others.
private final class ManagedAtomicFlag: Sendable {
    private let value = Atomic<Bool>(false)
    var isSet: Bool { value.load(ordering: .relaxed) }
    func set() { value.store(true, ordering: .relaxed) }
}
