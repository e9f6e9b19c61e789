import Foundation
import RedisClient
import RoomcastServer
import RoomcastTestSupport
import Testing

/// `redis.tls_*` and `redis.wait_*`: read from the file and the environment like every setting;
/// the client's configuration made from them at start-up (`redisClientConfiguration()`, which
/// `validateForServing()` runs), files read then, refusals naming the setting.
@Suite("Gateway settings: Redis TLS and durable acks")
struct RedisSettingsTests {
    private func load(_ environment: [String: String], file: String = "/nonexistent/roomcast.yaml") async throws -> GatewaySettings {
        try await GatewaySettings.load(configFile: file, requireFile: file != "/nonexistent/roomcast.yaml", overrides: [:], environment: environment)
    }

    /// The client's configuration from `environment`.
    private func client(_ environment: [String: String], file: String = "/nonexistent/roomcast.yaml") async throws -> RedisConfiguration {
        try await load(environment, file: file).redisClientConfiguration()
    }

    /// The refusal of `environment`, at load or when the client's configuration is made, or a
    /// test failure when it is accepted.
    private func refusal(_ environment: [String: String]) async throws -> ConfigurationError? {
        do {
            _ = try await client(environment)
            Issue.record("accepted: \(environment)")
            return nil
        } catch let error as ConfigurationError {
            return error
        }
    }

    static func withCertificates<Result>(_ body: (URL, TestCertificateAuthority, TestCertificate) async throws -> Result) async throws -> Result {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("roomcast-settings-tls-\(UUID().uuidString.prefix(8))")
        defer { try? FileManager.default.removeItem(at: directory) }
        let authority = try await TestCertificateAuthority(name: "settings-ca", in: directory)
        return try await body(directory, authority, try await authority.issue("client"))
    }

    @Test("rediss:// alone is TLS with the system's trust store; redis:// is plain; no durable acks by default")
    func defaults() async throws {
        let plain = try await client(["ROOMCAST_REDIS_URL": "redis://127.0.0.1:6379"])
        #expect(plain.tls == nil)
        #expect(plain.writeDurability == .master)
        let tls = try await client(["ROOMCAST_REDIS_URL": "rediss://:pw@cache.example:6380"])
        #expect(tls.tls != nil && tls.tls?.caFile == nil)
        let cluster = try await client(["ROOMCAST_REDIS_URL": "rediss-cluster://a:7000,b:7001"])
        #expect(cluster.isCluster && cluster.tls != nil)
        // The URL as the settings show it keeps its scheme, never its credentials.
        let shown = GatewaySettings.setting("redis.url")?.value(in: try await load(["ROOMCAST_REDIS_URL": "rediss://:pw@cache.example:6380"]))
        #expect(shown == "rediss://cache.example:6380")
    }

    @Test("the CA file, client certificate and key, and server name, from the environment or the file")
    func tlsSettings() async throws {
        try await Self.withCertificates { directory, authority, clientCertificate in
            let fromEnvironment = try await client([
                "ROOMCAST_REDIS_URL": "rediss://cache.example:6380",
                "ROOMCAST_REDIS_TLS_CA_FILE": authority.certificateFile,
                "ROOMCAST_REDIS_TLS_CERT_FILE": clientCertificate.certificateFile,
                "ROOMCAST_REDIS_TLS_KEY_FILE": clientCertificate.keyFile,
                "ROOMCAST_REDIS_TLS_SERVER_NAME": "redis.internal",
            ])
            let tls = try #require(fromEnvironment.tls)
            #expect(tls.caFile == authority.certificateFile && tls.certificateFile == clientCertificate.certificateFile)
            #expect(tls.privateKeyFile == clientCertificate.keyFile && tls.serverName == "redis.internal")

            let file = directory.appendingPathComponent("roomcast.yaml").path
            try """
                redis:
                  url: rediss-cluster://a:7000,b:7001
                  tls_ca_file: \(authority.certificateFile)
                  tls_server_name: redis.internal
                """.write(toFile: file, atomically: true, encoding: .utf8)
            let fromFile = try await client([:], file: file)
            #expect(fromFile.isCluster)
            #expect(fromFile.tls?.caFile == authority.certificateFile && fromFile.tls?.serverName == "redis.internal")
            #expect(fromFile.tls?.certificateFile == nil)
        }
    }

    @Test("TLS settings that cannot work stop start-up (validateForServing), naming the setting")
    func tlsRefusals() async throws {
        try await Self.withCertificates { directory, authority, clientCertificate in
            let missing = directory.appendingPathComponent("missing.pem").path
            let cases: [([String: String], String, String)] = [
                (["ROOMCAST_REDIS_URL": "redis://a:1", "ROOMCAST_REDIS_TLS_CA_FILE": authority.certificateFile], "redis.tls_ca_file", "rediss://"),
                (["ROOMCAST_REDIS_URL": "rediss://a:1", "ROOMCAST_REDIS_TLS_CA_FILE": missing], "redis.tls_ca_file", missing),
                (["ROOMCAST_REDIS_URL": "rediss://a:1", "ROOMCAST_REDIS_TLS_CERT_FILE": clientCertificate.certificateFile], "redis.tls_cert_file", "private key"),
                (
                    ["ROOMCAST_REDIS_URL": "rediss://a:1", "ROOMCAST_REDIS_TLS_CERT_FILE": clientCertificate.certificateFile, "ROOMCAST_REDIS_TLS_KEY_FILE": missing],
                    "redis.tls_key_file", missing
                ),
                (["ROOMCAST_REDIS_URL": "rediss://a:1", "ROOMCAST_REDIS_TLS_SERVER_NAME": "10.1.2.3"], "redis.tls_server_name", "DNS name"),
            ]
            for (environment, key, reason) in cases {
                let error = try await refusal(environment)
                #expect(error?.key == key, "\(environment): \(String(describing: error))")
                #expect(error?.description.contains(reason) == true, "\(environment): \(String(describing: error))")
            }
        }
    }

    @Test("redis.wait_replicas turns durable acks on, with redis.wait_timeout_ms (500 ms by default), shorter than the command timeout")
    func waitSettings() async throws {
        let serving = try await load(["ROOMCAST_JWT_SECRET": GatewayProcess.jwtSecret, "ROOMCAST_REDIS_WAIT_REPLICAS": "1", "ROOMCAST_REDIS_WAIT_TIMEOUT_MS": "5000"])
        #expect(throws: ConfigurationError.self) { try serving.validateForServing() }
        let on = try await client(["ROOMCAST_REDIS_WAIT_REPLICAS": "1"])
        #expect(on.writeDurability == .replicas(1, timeout: .milliseconds(500)))
        let tuned = try await client(["ROOMCAST_REDIS_WAIT_REPLICAS": "2", "ROOMCAST_REDIS_WAIT_TIMEOUT_MS": "250"])
        #expect(tuned.writeDurability == .replicas(2, timeout: .milliseconds(250)))
        let off = try await client(["ROOMCAST_REDIS_WAIT_REPLICAS": "0", "ROOMCAST_REDIS_WAIT_TIMEOUT_MS": "250"])
        #expect(off.writeDurability == .master)
        let tooLong = try await refusal(["ROOMCAST_REDIS_WAIT_REPLICAS": "1", "ROOMCAST_REDIS_WAIT_TIMEOUT_MS": "2000", "ROOMCAST_REDIS_COMMAND_TIMEOUT_MS": "2000"])
        #expect(tooLong?.key == "redis.wait_timeout_ms")
        #expect(try await refusal(["ROOMCAST_REDIS_WAIT_REPLICAS": "one"])?.key == "redis.wait_replicas")
    }
}
