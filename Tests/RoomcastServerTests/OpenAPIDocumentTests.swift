import Foundation
import HTTPTypes
import Hummingbird
import Logging
import RoomcastTestSupport
@testable import RoomcastServer
import Testing

/// The OpenAPI document (`Sources/RoomcastServer/OpenAPI/openapi.json`) against the router the
/// gateway builds, and as a node serves it. `scripts/schemathesis.sh` checks the answers.
@Suite("The OpenAPI document")
struct OpenAPIDocumentTests {
    /// The operations a path item may hold.
    static let methods: Set<String> = ["get", "put", "post", "delete", "options", "head", "patch", "trace"]

    /// The document as the resource bundle ships it, parsed.
    static func document() throws -> [String: Any] {
        let bytes = try #require(OpenAPIRoutes.documentBytes(), "openapi.json is missing from the resource bundle")
        return try #require(try JSONSerialization.jsonObject(with: bytes) as? [String: Any])
    }

    /// `METHOD /path/{param}` for every operation of the document.
    static func documented() throws -> Set<String> {
        let paths = try #require(try document()["paths"] as? [String: [String: Any]])
        return Set(paths.flatMap { path, item in item.keys.filter(methods.contains).map { "\($0.uppercased()) \(path)" } })
    }

    /// `METHOD /path/{param}` for every route of the router the gateway serves; Hummingbird's
    /// `:param` spelt as OpenAPI's `{param}`.
    static func registered(_ settings: GatewaySettings) throws -> Set<String> {
        let node = try Gateway(settings: settings, logger: Logger(label: "openapi-test")).assemble(secret: GatewayProcess.jwtSecret)
        return Set(
            node.router.routes.map { route in
                let path = route.path.description.split(separator: "/", omittingEmptySubsequences: false)
                    .map { $0.hasPrefix(":") ? "{\($0.dropFirst())}" : String($0) }.joined(separator: "/")
                return "\(route.method.rawValue) \(path)"
            }
        )
    }

    @Test("every route the gateway registers is documented, and every documented route is registered")
    func routesMatch() throws {
        var settings = GatewaySettings()
        settings.jwtSecret = GatewayProcess.jwtSecret
        // Routes that only some settings add would show here: the service key's route is always there.
        settings.notifications.serviceKey = "0123456789abcdef0123"
        let registered = try Self.registered(settings)
        let documented = try Self.documented()
        #expect(registered.count > 20, "\(registered.sorted())")
        #expect(registered.subtracting(documented).isEmpty, "registered but not documented: \(registered.subtracting(documented).sorted())")
        #expect(documented.subtracting(registered).isEmpty, "documented but not registered: \(documented.subtracting(registered).sorted())")
        // Without the optional settings the router is the same.
        #expect(try Self.registered({ var plain = GatewaySettings(); plain.jwtSecret = GatewayProcess.jwtSecret; return plain }()) == registered)
    }

    @Test("the document is OpenAPI 3.1 with a bearer JWT scheme, and every operation has an id and responses")
    func documentShape() throws {
        let document = try Self.document()
        #expect((document["openapi"] as? String)?.hasPrefix("3.1") == true)
        let schemes = try #require((document["components"] as? [String: Any])?["securitySchemes"] as? [String: [String: Any]])
        #expect(schemes["bearerAuth"]?["scheme"] as? String == "bearer")
        #expect(schemes["bearerAuth"]?["bearerFormat"] as? String == "JWT")
        let paths = try #require(document["paths"] as? [String: [String: Any]])
        var ids: Set<String> = []
        for (path, item) in paths {
            for (method, value) in item where Self.methods.contains(method) {
                let operation = try #require(value as? [String: Any])
                let id = try #require(operation["operationId"] as? String, "\(method) \(path)")
                #expect(ids.insert(id).inserted, "operationId \(id) twice")
                #expect((operation["responses"] as? [String: Any])?.isEmpty == false, "\(method) \(path)")
            }
        }
    }

    @Test("a node serves the document at GET /api/openapi.json as JSON, without a token and despite a bad one")
    func served() async throws {
        try await TestRedis.with { redis in
            let node = try await GatewayProcess(arguments: ["--redis-url", redis.url, "--log-level", "warning"])
            let expected = try #require(OpenAPIRoutes.documentBytes())
            for headers in [[:], ["Authorization": "Bearer not-a-token"]] {
                let response = try await HTTPTestClient.request(port: node.port, path: "/api/openapi.json", headers: headers)
                #expect(response.status == 200, "\(response.text)")
                #expect(response.headers["content-type"] == "application/json")
                #expect(response.body == expected)
            }
            await node.stop()
        }
    }
}
