import Foundation
import RedisClient
import RoomcastServer
import RoomcastTestSupport
import Testing

/// `redis.tls.*` and `redis.wait_*`: read from the file and the environment like every setting,
/// files checked at start-up, refusals naming the setting.
@Suite("Gateway settings: Redis TLS and durable acks")
struct RedisSettingsTests {
    private func load(_ environment: [String: String], file: String = "/nonexistent/roomcast.yaml") async throws -> GatewaySettings {
        try await GatewaySettings.load(configFile: file, requireFile: file != "/nonexistent/roomcast.yaml", overrides: [:], environment: environment)
    }

    /// The refusal of `environment`, or a test failure when it is accepted.
    private func refusal(_ environment: [String: String]) async throws -> ConfigurationError? {
        do {
            _ = try await load(environment)
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
        let plain = try await load(["ROOMCAST_REDIS_URL": "redis://127.0.0.1:6379"])
        #expect(plain.redis.tls == nil)
        #expect(plain.redis.writeDurability == .master)
        let tls = try await load(["ROOMCAST_REDIS_URL": "rediss://:pw@cache.example:6380"])
        #expect(tls.redis.tls != nil && tls.redis.tls?.caFile == nil)
        let cluster = try await load(["ROOMCAST_REDIS_URL": "rediss-cluster://a:7000,b:7001"])
        #expect(cluster.redis.isCluster && cluster.redis.tls != nil)
    }

    @Test("the CA file, client certificate and key, and server name, from the environment or the file")
    func tlsSettings() async throws {
        try await Self.withCertificates { directory, authority, client in
            let fromEnvironment = try await load([
                "ROOMCAST_REDIS_URL": "rediss://cache.example:6380",
                "ROOMCAST_REDIS_TLS_CA_FILE": authority.certificateFile,
                "ROOMCAST_REDIS_TLS_CERT_FILE": client.certificateFile,
                "ROOMCAST_REDIS_TLS_KEY_FILE": client.keyFile,
                "ROOMCAST_REDIS_TLS_SERVER_NAME": "redis.internal",
            ])
            let tls = try #require(fromEnvironment.redis.tls)
            #expect(tls.caFile == authority.certificateFile && tls.certificateFile == client.certificateFile)
            #expect(tls.privateKeyFile == client.keyFile && tls.serverName == "redis.internal")

            let file = directory.appendingPathComponent("roomcast.yaml").path
            try """
                redis:
                  url: rediss-cluster://a:7000,b:7001
                  tls:
                    ca_file: \(authority.certificateFile)
                    server_name: redis.internal
                """.write(toFile: file, atomically: true, encoding: .utf8)
            let fromFile = try await load([:], file: file)
            #expect(fromFile.redis.isCluster)
            #expect(fromFile.redis.tls?.caFile == authority.certificateFile && fromFile.redis.tls?.serverName == "redis.internal")
            #expect(fromFile.redis.tls?.certificateFile == nil)
        }
    }

    @Test("TLS settings that cannot work stop start-up, naming the setting")
    func tlsRefusals() async throws {
        try await Self.withCertificates { directory, authority, client in
            let missing = directory.appendingPathComponent("missing.pem").path
            let cases: [([String: String], String, String)] = [
                (["ROOMCAST_REDIS_URL": "redis://a:1", "ROOMCAST_REDIS_TLS_CA_FILE": authority.certificateFile], "redis.tls.ca_file", "rediss://"),
                (["ROOMCAST_REDIS_URL": "rediss://a:1", "ROOMCAST_REDIS_TLS_CA_FILE": missing], "redis.tls.ca_file", missing),
                (["ROOMCAST_REDIS_URL": "rediss://a:1", "ROOMCAST_REDIS_TLS_CERT_FILE": client.certificateFile], "redis.tls.cert_file", "private key"),
                (
                    ["ROOMCAST_REDIS_URL": "rediss://a:1", "ROOMCAST_REDIS_TLS_CERT_FILE": client.certificateFile, "ROOMCAST_REDIS_TLS_KEY_FILE": missing],
                    "redis.tls.key_file", missing
                ),
                (["ROOMCAST_REDIS_URL": "rediss://a:1", "ROOMCAST_REDIS_TLS_SERVER_NAME": "10.1.2.3"], "redis.tls.server_name", "DNS name"),
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
        let on = try await load(["ROOMCAST_REDIS_WAIT_REPLICAS": "1"])
        #expect(on.redis.writeDurability == .replicas(1, timeout: .milliseconds(500)))
        let tuned = try await load(["ROOMCAST_REDIS_WAIT_REPLICAS": "2", "ROOMCAST_REDIS_WAIT_TIMEOUT_MS": "250"])
        #expect(tuned.redis.writeDurability == .replicas(2, timeout: .milliseconds(250)))
        let off = try await load(["ROOMCAST_REDIS_WAIT_REPLICAS": "0", "ROOMCAST_REDIS_WAIT_TIMEOUT_MS": "250"])
        #expect(off.redis.writeDurability == .master)
        let tooLong = try await refusal(["ROOMCAST_REDIS_WAIT_REPLICAS": "1", "ROOMCAST_REDIS_WAIT_TIMEOUT_MS": "2000", "ROOMCAST_REDIS_COMMAND_TIMEOUT_MS": "2000"])
        #expect(tooLong?.key == "redis.wait_timeout_ms")
        #expect(try await refusal(["ROOMCAST_REDIS_WAIT_REPLICAS": "one"])?.key == "redis.wait_replicas")
    }
}
