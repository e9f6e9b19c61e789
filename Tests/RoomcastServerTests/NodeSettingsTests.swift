import RoomcastServer
import Testing

/// `node.advertise_url` and `node.ttl_ms`: the node registry's settings.
@Suite("Node settings")
struct NodeSettingsTests {
    static func load(_ environment: [String: String]) async throws -> GatewaySettings {
        try await GatewaySettings.load(configFile: "/nonexistent/roomcast.yaml", requireFile: false, overrides: [:], environment: environment)
    }

    @Test("by default a node advertises its host and bound port, loopback for a wildcard host, and lives 15 s per heartbeat")
    func defaults() async throws {
        let settings = try await Self.load([:])
        #expect(settings.nodeTTL == .seconds(15))
        #expect(settings.advertiseURL(port: 8081) == "http://127.0.0.1:8081")
        #expect(try await Self.load(["ROOMCAST_HOST": "0.0.0.0"]).advertiseURL(port: 80) == "http://127.0.0.1:80")
        #expect(try await Self.load(["ROOMCAST_HOST": "::"]).advertiseURL(port: 80) == "http://127.0.0.1:80")
        #expect(try await Self.load(["ROOMCAST_HOST": "10.0.0.5"]).advertiseURL(port: 8080) == "http://10.0.0.5:8080")
        #expect(try await Self.load(["ROOMCAST_HOST": "::1"]).advertiseURL(port: 8080) == "http://[::1]:8080")
    }

    @Test("an advertise URL set is used as it is, without a trailing slash")
    func advertiseURL() async throws {
        let settings = try await Self.load(["ROOMCAST_NODE_ADVERTISE_URL": "http://gw-1.internal:8080/", "ROOMCAST_NODE_TTL_MS": "3000"])
        #expect(settings.advertiseURL(port: 1234) == "http://gw-1.internal:8080")
        #expect(settings.nodeTTL == .milliseconds(3000))
    }

    @Test("a malformed advertise URL or TTL stops start-up naming the setting", arguments: [
        ("ROOMCAST_NODE_ADVERTISE_URL", "gw-1:8080", "node.advertise_url"),
        ("ROOMCAST_NODE_ADVERTISE_URL", "ftp://gw-1", "node.advertise_url"),
        ("ROOMCAST_NODE_ADVERTISE_URL", "http://gw-1:8080/socket.io", "node.advertise_url"),
        ("ROOMCAST_NODE_TTL_MS", "abc", "node.ttl_ms"),
        ("ROOMCAST_NODE_TTL_MS", "100", "node.ttl_ms"),
    ])
    func refused(_ variable: String, _ value: String, _ key: String) async throws {
        let error = await #expect(throws: ConfigurationError.self) { try await Self.load([variable: value]) }
        #expect(error?.key == key)
    }

    @Test("an https advertise URL stops start-up, saying that nodes forward over plain HTTP")
    func httpsAdvertiseURL() async throws {
        for url in ["https://gw-1.internal:8443", "HTTPS://gw-1.internal"] {
            let error = await #expect(throws: ConfigurationError.self) { try await Self.load(["ROOMCAST_NODE_ADVERTISE_URL": url]) }
            #expect(error?.key == "node.advertise_url")
            #expect(error?.reason.contains("plain HTTP") == true, "\(String(describing: error))")
        }
    }

    @Test("presence.backstop_ms defaults to an hour; the retired presence.ttl_ms stops start-up naming what replaced it")
    func presenceBackstop() async throws {
        #expect(try await Self.load([:]).presenceBackstop == .seconds(3_600))
        #expect(try await Self.load(["ROOMCAST_PRESENCE_BACKSTOP_MS": "600"]).presenceBackstop == .milliseconds(600))
        let malformed = await #expect(throws: ConfigurationError.self) { try await Self.load(["ROOMCAST_PRESENCE_BACKSTOP_MS": "100"]) }
        #expect(malformed?.key == "presence.backstop_ms")
        let retired = await #expect(throws: ConfigurationError.self) { try await Self.load(["ROOMCAST_PRESENCE_TTL_MS": "30000"]) }
        #expect(retired?.key == "presence.ttl_ms")
        #expect(retired?.reason.contains("node.ttl_ms") == true)
        #expect(retired?.reason.contains("presence.backstop_ms") == true)
    }
}
