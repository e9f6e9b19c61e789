import NIOCore
import RedisClient
import RoomcastTestSupport
import Testing

/// ``RedisWriteDurability/replicas(_:timeout:)``: a script's reply waits for `WAIT` on the very
/// connection that ran it, in one server with a replica and in a cluster with a replica per master.
@Suite("Durable writes: WAIT after the write, on its connection", .serialized)
struct DurableWriteTests {
    static let write = RedisScript(name: "write", source: "redis.call('SET', KEYS[1], ARGV[1]) return 'done'")

    /// A replica of `master`, in sync.
    static func withReplica<Result>(of master: RedisServer, _ body: (RedisServer) async throws -> Result) async throws -> Result {
        try await RedisServer.with(arguments: ["--replicaof", "127.0.0.1", "\(master.port)"]) { replica in
            #expect(try await eventually(within: .seconds(60)) {
                let info = try await RedisCluster.cli(["-p", "\(replica.port)", "INFO", "replication"])
                return info.contains("master_link_status:up")
            })
            return try await body(replica)
        }
    }

    @Test("one server: the reply comes once the replica has the write; a frozen replica makes it notReplicated, the write applied on the master")
    func standalone() async throws {
        try await RedisServer.with { master in
            try await Self.withReplica(of: master) { replica in
                // Several connections: a WAIT sent on another connection than the write, one that
                // wrote nothing, would be answered at once by the frozen replica's old offset.
                var configuration = try testConfiguration(master, poolSize: 4)
                let durable = RedisWriteDurability.replicas(1, timeout: .milliseconds(200))
                configuration.writeDurability = durable
                try await withClient(configuration) { client in
                    for round in 0..<8 {
                        let reply = try await client.evaluate(Self.write, keys: ["k\(round)"], arguments: ["v\(round)"], durability: durable)
                        #expect(reply.string == "done")
                        // Confirmed by the replica: it has it now.
                        #expect(try await RedisCluster.cli(["-p", "\(replica.port)", "GET", "k\(round)"]).contains("v\(round)"))
                    }

                    await replica.freeze()
                    for round in 0..<8 {
                        do throws(RedisError) {
                            _ = try await client.evaluate(Self.write, keys: ["lagging\(round)"], arguments: ["x"], durability: durable)
                            Issue.record("a durable write was answered while its replica was frozen")
                        } catch {
                            #expect(error.code == .notReplicated, "\(error)")
                        }
                        #expect(try await client.send("GET", "lagging\(round)").string == "x", "the master applied it")
                    }
                    // A write that asks only for the master's reply does not wait.
                    #expect(try await client.evaluate(Self.write, keys: ["plain"], arguments: ["y"], durability: .master).string == "done")
                    await replica.thaw()
                }
            }
        }
    }

    @Test("a cluster: WAIT goes to the master that ran the script; a lagging replica fails only its own master's writes")
    func cluster() async throws {
        try await RedisCluster.with(replicasPerMaster: 1) { cluster in
            var configuration = try testConfiguration(url: cluster.url, poolSize: 2)
            let durable = RedisWriteDurability.replicas(1, timeout: .milliseconds(200))
            configuration.writeDurability = durable
            try await withClient(configuration) { client in
                let keys = (0..<12).map { "durable:{\($0)}" }
                for key in keys {
                    #expect(try await client.evaluate(Self.write, keys: [key], arguments: ["v"], durability: durable).string == "done", "\(key)")
                }
                let victim = cluster.servers[0]
                let replica = try await cluster.replica(of: victim)
                await replica.freeze()
                var onVictim = 0
                for key in keys {
                    let port = try await cluster.port(servingKey: key)
                    do throws(RedisError) {
                        _ = try await client.evaluate(Self.write, keys: [key], arguments: ["w"], durability: durable)
                        #expect(port != victim.port, "\(key) on the lagging replica's master was answered")
                    } catch {
                        #expect(port == victim.port && error.code == .notReplicated, "\(key): \(error)")
                        onVictim += 1
                    }
                }
                #expect(onVictim > 0)
                await replica.thaw()
            }
        }
    }
}
