import Foundation
import NIOCore
import NIOPosix
import RedisClient
import RoomcastTestSupport
import Testing

/// `rediss://` and `rediss-cluster://` against `redis-server --tls-port` (no plain port) with
/// certificates each test makes: commands, library functions and sharded pub/sub go over TLS; a
/// server the client must not trust, or that does not trust the client, or a wrong password, is
/// refused at connect with an error naming the cause; the client keeps trying and gets through
/// once the server is right.
@Suite("Redis over TLS", .serialized)
struct RedisTLSTests {
    static func withCertificates<Result>(_ body: (TestTLSFiles) async throws -> Result) async throws -> Result {
        try await TestTLSFiles.with(body)
    }

    /// What connecting once answers: the error a pool logs and retries after.
    static func connectError(_ configuration: RedisConfiguration) async -> RedisError? {
        do {
            let connection = try await RedisConnection.connect(configuration: configuration, eventLoop: MultiThreadedEventLoopGroup.singleton.next())
            await connection.close()
            return nil
        } catch {
            return error
        }
    }

    @Test("rediss://: commands, a pipeline, a library function and sharded pub/sub, with a client certificate the server asks for")
    func standalone() async throws {
        try await Self.withCertificates { certificates in
            try await RedisServer.with(tls: .init(certificate: certificates.server, authClients: true)) { server in
                #expect(server.url.hasPrefix("rediss://"))
                var named = try certificates.configuration(url: server.url)
                named.clientName = "roomcast-tls-test"
                let configuration = named
                try await withRecordedSubscriber(configuration) { subscriber, recorder in
                    try await withClient(configuration) { client in
                        #expect(try await client.send("SET", "over", "tls") == .status("OK"))
                        #expect(try await client.send("GET", "over").string == "tls")
                        let replies = try await client.pipeline([RedisCommand("INCR", "n"), RedisCommand("INCR", "n")])
                        #expect(replies == [.integer(1), .integer(2)])
                        let library = RedisFunctionLibrary(
                            name: "tls", lua: "redis.register_function('echo_' .. VERSION, function(keys, args) return args[1] end)"
                        )
                        let echo = RedisFunctionCall("echo", in: library, keys: [], arguments: ["lua"], isReadOnly: false)
                        #expect(try await client.call(echo).string == "lua")
                        // The name is kept: `CLIENT LIST` tells the connections apart, TLS or not.
                        #expect(try await client.send("CLIENT", "INFO").string?.contains("name=roomcast-tls-test") == true)

                        try await subscriber.subscribe(["room:{t}:events"])
                        #expect(try await client.send("SPUBLISH", "room:{t}:events", "hello") == .integer(1))
                        let message = try await recorder.next { $0.message }
                        #expect(message.channel == "room:{t}:events" && message.payload == ByteBuffer(string: "hello"))
                    }
                }
            }
        }
    }

    @Test("the server asks for a client certificate and none is set: refused at connect, saying so")
    func clientCertificateRequired() async throws {
        try await Self.withCertificates { certificates in
            try await RedisServer.with(tls: .init(certificate: certificates.server, authClients: true)) { server in
                let error = await Self.connectError(try certificates.configuration(url: server.url, clientCertificate: false))
                #expect(error?.code == .connectionFailed)
                #expect(error?.message.contains("client certificate") == true, "\(String(describing: error))")
            }
        }
    }

    @Test("a server certificate of another authority: refused, naming the CA file; the pool gets through once the server shows a trusted one")
    func untrustedAuthority() async throws {
        try await Self.withCertificates { certificates in
            let stranger = try await TestCertificateAuthority(name: "stranger-ca", in: certificates.directory)
            let strangers = try await stranger.issue("server", dnsNames: ["localhost"], addresses: ["127.0.0.1"])
            try await RedisServer.with(tls: .init(certificate: strangers)) { server in
                let configuration = try certificates.configuration(url: server.url)
                let error = await Self.connectError(configuration)
                #expect(error?.code == .connectionFailed)
                #expect(error?.message.contains("not trusted") == true, "\(String(describing: error))")
                #expect(error?.message.contains(certificates.authority.certificateFile) == true, "\(String(describing: error))")

                try await withClient(configuration) { client in
                    // Refused for as long as the server shows the stranger's certificate...
                    do throws(RedisError) {
                        _ = try await client.send(RedisCommand("PING"), timeout: .seconds(2))
                        Issue.record("a command went through to an untrusted server")
                    } catch {
                        #expect(error.message.contains("not trusted"), "\(error)")
                    }
                    // ...and the pool, still trying, gets through once it shows a trusted one.
                    try await server.restart(tls: .init(certificate: certificates.server))
                    #expect(try await eventually(within: .seconds(60)) { await client.ping() })
                }
            }
        }
    }

    @Test("a certificate for another name: refused for the address connected to; accepted with that name as the server name")
    func serverName() async throws {
        try await Self.withCertificates { certificates in
            let named = try await certificates.authority.issue("named", dnsNames: ["redis.roomcast.test"])
            try await RedisServer.with(tls: .init(certificate: named)) { server in
                let error = await Self.connectError(try certificates.configuration(url: server.url))
                #expect(error?.code == .connectionFailed)
                #expect(error?.message.contains("is not for '127.0.0.1'") == true, "\(String(describing: error))")
                let byName = await Self.connectError(try certificates.configuration(url: "rediss://localhost:\(server.port)"))
                #expect(byName?.message.contains("is not for 'localhost'") == true, "\(String(describing: byName))")

                let configuration = try certificates.configuration(url: server.url, serverName: "redis.roomcast.test")
                try await withClient(configuration) { client in
                    let reply = try await client.send("PING")
                    #expect(reply == .status("PONG"))
                }
            }
        }
    }

    @Test("a wrong password over TLS: refused at connect with Redis's reason; the pool gets through once the password is right")
    func wrongPassword() async throws {
        try await Self.withCertificates { certificates in
            try await RedisServer.with(arguments: ["--requirepass", "right"], tls: .init(certificate: certificates.server)) { server in
                let url = "rediss://:wrong@127.0.0.1:\(server.port)"
                let error = await Self.connectError(try certificates.configuration(url: url))
                #expect(error?.code == .connectionFailed)
                #expect(error?.message.contains("WRONGPASS") == true, "\(String(describing: error))")
                try await withClient(try certificates.configuration(url: url)) { client in
                    #expect(await !client.ping(timeout: .seconds(2)))
                    let cli = await server.cliArguments + ["-p", "\(server.port)", "-a", "right", "--no-auth-warning"]
                    _ = try await RedisCluster.cli(cli + ["CONFIG", "SET", "requirepass", "wrong"])
                    #expect(try await eventually(within: .seconds(60)) { await client.ping() })
                }
            }
        }
    }

    @Test("rediss:// to a port without TLS: a failed connect that says so (plain Redis waits for the rest of the ClientHello)")
    func plainPort() async throws {
        try await Self.withCertificates { certificates in
            try await RedisServer.with { server in
                let error = await Self.connectError(try certificates.configuration(url: "rediss://127.0.0.1:\(server.port)"))
                #expect(error?.code == .connectionFailed)
                #expect(error?.message.contains("is it a TLS port?") == true, "\(String(describing: error))")
            }
        }
    }

    @Test("settings that cannot work are refused when the configuration is made, naming the file")
    func badSettings() async throws {
        try await Self.withCertificates { certificates in
            let missing = certificates.directory.appendingPathComponent("missing.pem").path
            for (attempt, expected) in [
                ({ () throws(RedisError) in _ = try RedisTLS(caFile: missing) }, missing),
                ({ () throws(RedisError) in _ = try RedisTLS(certificateFile: certificates.client.certificateFile) }, "private key"),
                (
                    { () throws(RedisError) in
                        _ = try RedisTLS(certificateFile: certificates.client.certificateFile, privateKeyFile: certificates.server.keyFile)
                    }, "key belong"
                ),
                ({ () throws(RedisError) in _ = try RedisTLS(caFile: certificates.client.keyFile) }, "no PEM certificate"),
                ({ () throws(RedisError) in _ = try RedisTLS(serverName: "10.0.0.1") }, "DNS name"),
            ] as [(() throws(RedisError) -> Void, String)] {
                do throws(RedisError) {
                    try attempt()
                    Issue.record("accepted; expected a refusal mentioning \(expected)")
                } catch {
                    #expect(error.code == .invalidConfiguration)
                    #expect(error.message.contains(expected), "\(error)")
                }
            }
        }
    }

    @Test("rediss-cluster://: the slot map, routing, pipelines across masters and sharded pub/sub over TLS, the bus and replication too")
    func cluster() async throws {
        try await Self.withCertificates { certificates in
            try await RedisCluster.with(tls: .init(certificate: certificates.server, authClients: true)) { cluster in
                #expect(cluster.url.hasPrefix("rediss-cluster://"))
                let configuration = try certificates.configuration(url: cluster.url)
                #expect(configuration.isCluster && configuration.tls != nil)
                let channels = (0..<6).map { "room:{tls\($0)}:events" }
                try await withRecordedSubscriber(configuration) { subscriber, recorder in
                    try await withClient(configuration) { client in
                        let keys = (0..<12).map { "key:{\($0)}" }
                        let sets = try await client.pipeline(keys.map { RedisCommand("SET", $0, $0) })
                        #expect(sets.allSatisfy { $0 == .status("OK") })
                        var masters: Set<Int> = []
                        for key in keys {
                            #expect(try await client.send("GET", key).string == key)
                            masters.insert(try await cluster.port(servingKey: key))
                        }
                        #expect(masters.count == 3, "the keys span every master")

                        try await subscriber.subscribe(channels)
                        for channel in channels {
                            #expect(try await client.send("SPUBLISH", channel, "over tls") == .integer(1), "\(channel)")
                        }
                        var heard: Set<String> = []
                        while heard.count < channels.count {
                            heard.insert(try await recorder.next { $0.message }.channel)
                        }
                        #expect(heard == Set(channels))
                    }
                }
            }
        }
    }
}

extension TestTLSFiles {
    /// A client configuration for `url` trusting this authority, with test timeouts.
    func configuration(url: String, clientCertificate: Bool = true, serverName: String? = nil) throws -> RedisConfiguration {
        var configuration = try testConfiguration(url: url)
        configuration.tls = try RedisTLS(
            caFile: authority.certificateFile,
            certificateFile: clientCertificate ? client.certificateFile : nil,
            privateKeyFile: clientCertificate ? client.keyFile : nil,
            serverName: serverName
        )
        return configuration
    }
}
