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

    @Test("scripts run on the master of their keys and are loaded again there after SCRIPT FLUSH")
    func scripts() async throws {
        try await RedisCluster.with { cluster in
            try await cluster.withClusterClient { client in
                let script = RedisScript(name: "incr_both", source: "redis.call('INCR', KEYS[1]); return redis.call('INCR', KEYS[2])")
                try await client.load([script])
                for port in cluster.ports {
                    #expect(try await cluster.ask(port, "SCRIPT", "EXISTS", script.sha1) == "1")
                }
                for room in 0..<9 {
                    let keys = ["room:{s\(room)}:a", "room:{s\(room)}:b"]
                    #expect(try await client.evaluate(script, keys: keys) == .integer(1))
                }
                for port in cluster.ports { _ = try await cluster.ask(port, "SCRIPT", "FLUSH") }
                for room in 0..<9 {
                    #expect(try await client.evaluate(script, keys: ["room:{s\(room)}:a", "room:{s\(room)}:b"]) == .integer(2))
                }
                let crossSlot = await #expect(throws: RedisError.self) {
                    try await client.evaluate(script, keys: ["user:{a}", "push:{outbox}"])
                }
                #expect(crossSlot?.code == .crossSlot)
            }
        }
    }

    @Test("a script the importing master lacks is loaded there during a migration (ASK, then NOSCRIPT)")
    func scriptMissingOnTheImportingMaster() async throws {
        try await RedisCluster.with { cluster in
            try await cluster.withClusterClient { client in
                let script = RedisScript(name: "set_fresh", source: "return redis.call('SET', KEYS[1], ARGV[1])")
                let key = "room:{ask-noscript}:fresh"
                let source = try await cluster.port(servingKey: key)
                let target = try #require(cluster.ports.first { $0 != source })
                // Only the slot's master has the script, as after a NOSCRIPT answered there.
                #expect(try await cluster.ask(source, "SCRIPT", "LOAD", script.source) == script.sha1)
                #expect(try await cluster.ask(target, "SCRIPT", "EXISTS", script.sha1) == "0")
                // The slot starts migrating; the key is on neither master, so the source answers
                // ASK and the target, which lacks the script, NOSCRIPT.
                let slot = try await cluster.cli(port: source, ["CLUSTER", "KEYSLOT", key]).trimmingCharacters(in: .whitespacesAndNewlines)
                let sourceID = try await cluster.nodeID(port: source)
                let targetID = try await cluster.nodeID(port: target)
                _ = try await cluster.cli(port: target, ["CLUSTER", "SETSLOT", slot, "IMPORTING", sourceID])
                _ = try await cluster.cli(port: source, ["CLUSTER", "SETSLOT", slot, "MIGRATING", targetID])

                #expect(try await client.evaluate(script, keys: [key], arguments: ["moved"]) == .status("OK"))
                #expect(try await cluster.ask(target, "SCRIPT", "EXISTS", script.sha1) == "1")

                _ = try await cluster.cli(port: target, ["CLUSTER", "SETSLOT", slot, "NODE", targetID])
                _ = try await cluster.cli(port: source, ["CLUSTER", "SETSLOT", slot, "NODE", targetID])
                #expect(try await client.send("GET", key).string == "moved")
            }
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
                                    _ = try await client.evaluate(Self.increment, keys: [key])
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

    private static let increment = RedisScript(name: "increment", source: "return redis.call('INCR', KEYS[1])")
}

/// A flag set once by one task and read by others.
private final class ManagedAtomicFlag: Sendable {
    private let value = Atomic<Bool>(false)
    var isSet: Bool { value.load(ordering: .relaxed) }
    func set() { value.store(true, ordering: .relaxed) }
}
