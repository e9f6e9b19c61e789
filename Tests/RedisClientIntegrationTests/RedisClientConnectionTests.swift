import NIOCore
import RedisClient
import RoomcastTestSupport
import Testing

@Suite("RedisClient connections: login, timeouts, failures")
struct RedisClientConnectionTests {
    @Test("AUTH and SELECT from the URL")
    func authenticatesAndSelects() async throws {
        try await RedisServer.with(arguments: ["--requirepass", "s3cr%t"]) { server in
            let url = "redis://:s3cr%25t@127.0.0.1:\(server.port)/3"
            try await withClient(try RedisConfiguration(url: url)) { client in
                _ = try await client.send("SET", "where", "db3")
                #expect(try await client.send("CLIENT", "INFO").string?.contains("db=3") == true)
            }
        }
    }

    @Test("connections have Nagle's algorithm off and no root-only option, as getsockopt reads them back")
    func connectionSocketOptions() async throws {
        try await RedisServer.with { server in
            try await withClient(try RedisConfiguration(url: "redis://127.0.0.1:\(server.port)")) { client in
                _ = try await client.send("PING")
                let found = try TCPSocketProbe.options(ofConnectionsTo: server.port)
                #expect(!found.isEmpty)
                #expect(found.allSatisfy { $0 == .init(noDelay: true, debug: false) }, "per connection: \(found)")
            }
        }
    }

    @Test("a wrong password fails with Redis's message within the timeout")
    func wrongPassword() async throws {
        try await RedisServer.with(arguments: ["--requirepass", "right"]) { server in
            var configuration = try RedisConfiguration(url: "redis://:wrong@127.0.0.1:\(server.port)")
            // Long enough for the first refused handshake to happen first even on a loaded
            // machine: the error then carries Redis's reason (a 0.5 s limit was flaky in CI).
            configuration.commandTimeout = .seconds(3)
            try await withClient(configuration) { client in
                do {
                    _ = try await client.send("PING")
                    Issue.record("PING should fail without a valid password")
                } catch let error as RedisError {
                    #expect(error.code == .timeout)
                    #expect(error.message.contains("WRONGPASS") || error.message.contains("invalid password"))
                }
            }
        }
    }

    @Test("a command against a stopped Redis fails, by its timeout or the closed connection, and does not wait for Redis")
    func stoppedRedisFailsInTime() async throws {
        try await RedisServer.with { server in
            var configuration = try testConfiguration(server)
            configuration.commandTimeout = .milliseconds(300)
            try await withClient(configuration) { client in
                // The short command timeout is for the outage; connecting first may take longer.
                #expect(try await eventually { await client.ping() })
                await server.stop()
                // Ended by the closed connection or the 300 ms timeout; one that waited for Redis to
                // come back would never end, and `finishing` gives up on it.
                let error = try await finishing("two commands while Redis is down") { () -> RedisError? in
                    do {
                        _ = try await client.send("PING")
                        _ = try await client.send("PING")
                        return nil
                    } catch let error as RedisError {
                        return error
                    }
                }
                if let error {
                    #expect(error.code == .timeout || error.code == .connectionClosed)
                    #expect(error.message.contains("127.0.0.1:\(server.port)"))
                } else {
                    Issue.record("commands should fail while Redis is down")
                }
                try await server.start()
                #expect(try await eventually { await client.ping() })
            }
        }
    }

    @Test("a slow reply times out, and the client reconnects for the next command")
    func slowReplyTimesOut() async throws {
        try await RedisServer.with { server in
            try await withClient(try testConfiguration(server, poolSize: 1)) { client in
                do {
                    _ = try await client.send(RedisCommand("BLPOP", "empty", "2"), timeout: .milliseconds(100))
                    Issue.record("BLPOP for 2 s should time out after 0.1 s")
                } catch let error as RedisError {
                    #expect(error.code == .timeout)
                    #expect(error.message.contains("BLPOP"))
                }
                #expect(try await eventually { await client.ping() })
            }
        }
    }

    @Test("commands in flight fail with connectionClosed when the link drops")
    func inFlightFailOnDrop() async throws {
        try await RedisServer.with { server in
            try await withClient(try testConfiguration(server, poolSize: 1)) { client in
                _ = try await client.send("CLIENT", "SETNAME", "victim")
                async let blocked = client.send(RedisCommand("BLPOP", "never", "5"), timeout: .seconds(10))
                try await Task.sleep(for: .milliseconds(100))
                let killed = try await withClient(try testConfiguration(server)) { killer in
                    try await killer.send("CLIENT", "KILL", "SKIPME", "yes", "TYPE", "normal")
                }
                #expect(killed != .integer(0))
                do {
                    _ = try await blocked
                    Issue.record("BLPOP should fail when its connection is killed")
                } catch let error as RedisError {
                    #expect(error.code == .connectionClosed)
                }
                #expect(try await eventually { await client.ping() })
            }
        }
    }
}
