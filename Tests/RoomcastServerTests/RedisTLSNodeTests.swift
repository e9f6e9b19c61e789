import Foundation
import RoomcastTestSupport
import Testing

/// `roomcast serve` on Redis over TLS (`rediss://`, `rediss-cluster://`, `redis.tls.*`), against
/// `redis-server --tls-port` with certificates each test makes. Served when all is right; when
/// the server's certificate is refused, our client certificate is, or the password is wrong, the
/// node starts anyway, logs the cause, answers `/readyz` 503, keeps retrying, and is ready once
/// Redis is right. A TLS file it cannot read stops start-up naming the setting.
@Suite(
    "roomcast serve on Redis over TLS", .serialized,
    .disabled(if: TestRedis.Mode.selected == .cluster, "starts TLS servers and a TLS cluster of its own: runs in the standalone pass")
)
struct RedisTLSNodeTests {
    static func withCertificates<Result>(_ body: (TestTLSFiles) async throws -> Result) async throws -> Result {
        try await TestTLSFiles.with(body)
    }

    static func ready(_ node: GatewayProcess) async throws -> Int {
        try await HTTPTestClient.request(port: node.port, path: "/readyz").status
    }

    /// Starts a node on `url` with `environment`, runs `body`, stops it.
    static func withNode<Result>(url: String, _ environment: [String: String], _ body: (GatewayProcess) async throws -> Result) async throws -> Result {
        let node = try await GatewayProcess(
            arguments: ["--redis-url", url], environment: environment.merging(["ROOMCAST_REDIS_COMMAND_TIMEOUT_MS": "2000"]) { $1 }
        )
        do {
            let result = try await body(node)
            await node.stop()
            return result
        } catch {
            node.process.signal(SIGKILL)
            throw error
        }
    }

    /// Alice and Bob register, Alice makes a room with Bob, both join it on sockets, and Alice's
    /// note reaches Bob: REST, scripts and pub/sub, all over TLS.
    static func roundTrip(on node: GatewayProcess) async throws {
        let alice = try await TwoNodeCluster.register("alice", on: node)
        let bob = try await TwoNodeCluster.register("bob", on: node)
        let created = try await HTTPTestClient.request(
            "POST", port: node.port, path: "/api/rooms",
            headers: ["Content-Type": "application/json", "Authorization": "Bearer \(alice.token)"],
            body: Data(#"{"participantIds":["\#(bob.id)"]}"#.utf8)
        )
        let room = try #require(try JSONValue(created.text)["data"]["id"].stringValue, "\(created.text)")
        let aliceSocket = try await SocketIOTestClient.connect(port: node.port, auth: #"{"token":"\#(alice.token)"}"#)
        let bobSocket = try await SocketIOTestClient.connect(port: node.port, auth: #"{"token":"\#(bob.token)"}"#)
        _ = try await ElementSocketTests.join(aliceSocket, room)
        _ = try await ElementSocketTests.join(bobSocket, room)
        _ = try await ElementSocketTests.create(aliceSocket, room)
        #expect(try await eventually(within: .seconds(30)) { await bobSocket.events(named: "element:created").count == 1 })
        _ = try await aliceSocket.close()
        _ = try await bobSocket.close()
    }

    /// A node that cannot use Redis yet: up, not ready, the cause in its log, still running.
    static func expectNotReady(_ node: GatewayProcess, cause: String) async throws {
        #expect(try await Self.ready(node) == 503)
        #expect(try await HTTPTestClient.request(port: node.port, path: "/healthz").status == 200)
        #expect(try await eventually(within: .seconds(60)) { node.output.contains(cause) }, "log:\n\(node.output)")
        #expect(node.process.isRunning, "log:\n\(node.output)")
        #expect(try await Self.ready(node) == 503)
    }

    @Test("rediss:// with a CA file and a client certificate: ready, serves the API, named in CLIENT LIST")
    func serves() async throws {
        try await Self.withCertificates { certificates in
            try await RedisServer.with(tls: .init(certificate: certificates.server, authClients: true)) { server in
                try await Self.withNode(url: server.url, certificates.environment) { node in
                    #expect(try await eventually(within: .seconds(60)) { try await Self.ready(node) == 200 })
                    try await Self.roundTrip(on: node)
                    let clients = try await RedisCluster.cli(await server.cliArguments + ["-p", "\(server.port)", "CLIENT", "LIST"])
                    #expect(clients.contains("name=roomcast-gateway"), "\(clients)")
                }
            }
        }
    }

    @Test("rediss-cluster:// on a TLS-only cluster: ready, serves the API")
    func cluster() async throws {
        try await Self.withCertificates { certificates in
            try await RedisCluster.with(tls: .init(certificate: certificates.server, authClients: true)) { cluster in
                try await Self.withNode(url: cluster.url, certificates.environment) { node in
                    #expect(try await eventually(within: .seconds(60)) { try await Self.ready(node) == 200 })
                    try await Self.roundTrip(on: node)
                }
            }
        }
    }

    @Test("a server certificate of another authority: not ready, the log says it is not trusted; ready once the server shows a trusted one")
    func untrustedServer() async throws {
        try await Self.withCertificates { certificates in
            let stranger = try await TestCertificateAuthority(name: "stranger-ca", in: certificates.directory)
            let strangers = try await stranger.issue("server", dnsNames: ["localhost"], addresses: ["127.0.0.1"])
            try await RedisServer.with(tls: .init(certificate: strangers)) { server in
                try await Self.withNode(url: server.url, certificates.environment) { node in
                    try await Self.expectNotReady(node, cause: "is not trusted")
                    try await server.restart(tls: .init(certificate: certificates.server))
                    #expect(try await eventually(within: .seconds(60)) { try await Self.ready(node) == 200 }, "log:\n\(node.output)")
                }
            }
        }
    }

    @Test("a server certificate for another name: not ready, the log names the mismatch; ready once the certificate is for its address")
    func nameMismatch() async throws {
        try await Self.withCertificates { certificates in
            let named = try await certificates.authority.issue("elsewhere", dnsNames: ["redis.elsewhere.test"])
            try await RedisServer.with(tls: .init(certificate: named)) { server in
                try await Self.withNode(url: server.url, certificates.environment) { node in
                    try await Self.expectNotReady(node, cause: "is not for '127.0.0.1'")
                    try await server.restart(tls: .init(certificate: certificates.server))
                    #expect(try await eventually(within: .seconds(60)) { try await Self.ready(node) == 200 }, "log:\n\(node.output)")
                }
            }
        }
    }

    @Test("a wrong password over TLS: not ready, the log gives Redis's reason; ready once the password is right")
    func wrongPassword() async throws {
        try await Self.withCertificates { certificates in
            try await RedisServer.with(arguments: ["--requirepass", "right"], tls: .init(certificate: certificates.server)) { server in
                try await Self.withNode(url: "rediss://:wrong@127.0.0.1:\(server.port)", certificates.environment) { node in
                    try await Self.expectNotReady(node, cause: "WRONGPASS")
                    let cli = await server.cliArguments + ["-p", "\(server.port)", "-a", "right", "--no-auth-warning"]
                    _ = try await RedisCluster.cli(cli + ["CONFIG", "SET", "requirepass", "wrong"])
                    #expect(try await eventually(within: .seconds(60)) { try await Self.ready(node) == 200 }, "log:\n\(node.output)")
                }
            }
        }
    }

    @Test("a CA file that is not there stops start-up, naming the setting and the file")
    func missingCAFile() async throws {
        let missing = "/nonexistent/roomcast-ca.pem"
        let (status, output) = try await GatewayProcess.runToExit(
            arguments: ["serve", "--port", "0"],
            environment: GatewayProcess.testEnvironment.merging(["ROOMCAST_REDIS_URL": "rediss://127.0.0.1:6390", "ROOMCAST_REDIS_TLS_CA_FILE": missing]) { $1 }
        )
        #expect(status != 0)
        #expect(output.contains("ROOMCAST_REDIS_TLS_CA_FILE") && output.contains(missing), "\(output)")
        #expect(!output.contains("roomcast ready"))
    }
}

extension TestTLSFiles {
    /// A node's TLS settings: this authority, and the client certificate.
    var environment: [String: String] {
        [
            "ROOMCAST_REDIS_TLS_CA_FILE": authority.certificateFile,
            "ROOMCAST_REDIS_TLS_CERT_FILE": client.certificateFile,
            "ROOMCAST_REDIS_TLS_KEY_FILE": client.keyFile,
        ]
    }
}
