import NIOCore
import RedisClient
import RoomcastTestSupport
import Testing

/// ``RedisWriteDurability/replicas(_:timeout:)``: a function call's reply waits for `WAIT` on the
/// very connection that ran it, in one server with a replica and in a cluster with a replica per
/// master, a call that had to load its library first included.
@Suite("Durable writes: WAIT after the write, on its connection", .serialized)
struct DurableWriteTests {
    static let library = RedisFunctionLibrary(
        name: "durable",
        lua: "redis.register_function('write_' .. VERSION, function(keys, args) redis.call('SET', keys[1], args[1]) return 'done' end)"
    )

    static func write(_ key: String, _ value: String) -> RedisFunctionCall {
        RedisFunctionCall("write", in: library, keys: [key], arguments: [value], isReadOnly: false)
    }

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
                    // The library is not loaded yet: the first call loads it, then runs with its WAIT;
                    // so does the call after FUNCTION FLUSH.
                    for round in 0..<8 {
                        if round == 4 { _ = try await client.send("FUNCTION", "FLUSH") }
                        let reply = try await client.call(Self.write("k\(round)", "v\(round)"), durability: durable)
                        #expect(reply.string == "done")
                        // Confirmed by the replica: it has it now.
                        #expect(try await RedisCluster.cli(["-p", "\(replica.port)", "GET", "k\(round)"]).contains("v\(round)"))
                    }

                    await replica.freeze()
                    for round in 0..<8 {
                        if round == 4 { _ = try await client.send("FUNCTION", "FLUSH") }
                        do throws(RedisError) {
                            _ = try await client.call(Self.write("lagging\(round)", "x"), durability: durable)
                            Issue.record("a durable write was answered while its replica was frozen")
                        } catch {
                            #expect(error.code == .notReplicated, "\(error)")
                        }
                        #expect(try await client.send("GET", "lagging\(round)").string == "x", "the master applied it")
                    }
                    // A write that asks only for the master's reply does not wait.
                    #expect(try await client.call(Self.write("plain", "y"), durability: .master).string == "done")
                    await replica.thaw()
                }
            }
        }
    }

    @Test("a cluster: WAIT goes to the master that ran the function; a lagging replica fails only its own master's writes")
    func cluster() async throws {
        try await RedisCluster.with(replicasPerMaster: 1) { cluster in
            var configuration = try testConfiguration(url: cluster.url, poolSize: 2)
            let durable = RedisWriteDurability.replicas(1, timeout: .milliseconds(200))
            configuration.writeDurability = durable
            try await withClient(configuration) { client in
                let keys = (0..<12).map { "durable:{\($0)}" }
                for key in keys {
                    #expect(try await client.call(Self.write(key, "v"), durability: durable).string == "done", "\(key)")
                }
                let victim = cluster.servers[0]
                let replica = try await cluster.replica(of: victim)
                await replica.freeze()
                var onVictim = 0
                for key in keys {
                    let port = try await cluster.port(servingKey: key)
                    do throws(RedisError) {
                        _ = try await client.call(Self.write(key, "w"), durability: durable)
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
