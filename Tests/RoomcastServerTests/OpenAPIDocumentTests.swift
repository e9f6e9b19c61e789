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

    /// Engine.IO's routes beyond the handshake: a poll or a send is valid only with a session id
    /// a handshake gave out, which no schema can say, and other methods are always refused; the
    /// document's description of the handshake tells what they do.
    static let engineIOBeyondTheHandshake: Set<String> = ["POST /socket.io", "PUT /socket.io", "DELETE /socket.io", "PATCH /socket.io"]

    @Test("every route the gateway registers is documented, and every documented route is registered")
    func routesMatch() throws {
        var settings = GatewaySettings()
        settings.jwtSecret = GatewayProcess.jwtSecret
        // Routes that only some settings add would show here: the service key's route is always there.
        settings.notifications.serviceKey = "0123456789abcdef0123"
        let registered = try Self.registered(settings).subtracting(Self.engineIOBeyondTheHandshake)
        #expect(try Self.registered(settings).isSuperset(of: Self.engineIOBeyondTheHandshake))
        let documented = try Self.documented()
        #expect(registered.count > 20, "\(registered.sorted())")
        #expect(registered.subtracting(documented).isEmpty, "registered but not documented: \(registered.subtracting(documented).sorted())")
        #expect(documented.subtracting(registered).isEmpty, "documented but not registered: \(documented.subtracting(registered).sorted())")
        // Without the optional settings the router is the same.
        #expect(
            try Self.registered({ var plain = GatewaySettings(); plain.jwtSecret = GatewayProcess.jwtSecret; return plain }())
                .subtracting(Self.engineIOBeyondTheHandshake) == registered
        )
    }

    @Test("a node without a service key serves the document without the internal notifications operation, its tag and its scheme")
    func servedWithoutServiceKey() throws {
        #expect(OpenAPIRoutes.served(servesInternalNotifications: true) == OpenAPIRoutes.documentBytes())
        let bytes = try #require(OpenAPIRoutes.served(servesInternalNotifications: false))
        let served = try #require(try JSONSerialization.jsonObject(with: bytes) as? [String: Any])
        let paths = try #require(served["paths"] as? [String: Any])
        #expect(paths[InternalNotificationRoutes.path] == nil)
        #expect(try Set(paths.keys) == Set(#require(try Self.document()["paths"] as? [String: Any]).keys).subtracting([InternalNotificationRoutes.path]))
        #expect(((served["tags"] as? [[String: Any]]) ?? []).allSatisfy { $0["name"] as? String != InternalNotificationRoutes.tag })
        let schemes = try #require((served["components"] as? [String: Any])?["securitySchemes"] as? [String: Any])
        #expect(schemes[InternalNotificationRoutes.securityScheme] == nil && schemes["bearerAuth"] != nil)
        // Written again from the parsed document: booleans stay booleans, text stays as it was.
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(text.contains(#""additionalProperties":false"#) && text.contains(#""required":true"#))
        #expect(!text.contains(#""additionalProperties":0"#) && !text.contains(#"\/"#))
        let shipped = try Self.document()
        #expect(NSDictionary(dictionary: (shipped["paths"] as? [String: Any] ?? [:]).filter { $0.key != InternalNotificationRoutes.path }).isEqual(to: paths))
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

    @Test("a node serves the document at GET /api/openapi.json as JSON, without a token and despite a bad one; without a service key, without its route")
    func served() async throws {
        try await TestRedis.with { redis in
            let node = try await GatewayProcess(
                arguments: ["--redis-url", redis.url, "--log-level", "warning"], environment: ["ROOMCAST_NOTIFICATIONS_SERVICE_KEY": "0123456789abcdef0123"]
            )
            let expected = try #require(OpenAPIRoutes.documentBytes())
            for headers in [[:], ["Authorization": "Bearer not-a-token"]] {
                let response = try await HTTPTestClient.request(port: node.port, path: "/api/openapi.json", headers: headers)
                #expect(response.status == 200, "\(response.text)")
                #expect(response.headers["content-type"] == "application/json")
                #expect(response.body == expected)
            }
            await node.stop()

            let keyless = try await GatewayProcess(arguments: ["--redis-url", redis.url, "--log-level", "warning"])
            let response = try await HTTPTestClient.request(port: keyless.port, path: "/api/openapi.json")
            #expect(response.status == 200)
            #expect(response.body == OpenAPIRoutes.served(servesInternalNotifications: false))
            let paths = try #require((try JSONSerialization.jsonObject(with: Data(response.text.utf8)) as? [String: Any])?["paths"] as? [String: Any])
            #expect(paths[InternalNotificationRoutes.path] == nil && paths[OpenAPIRoutes.path] != nil)
            // What the document no longer lists answers as an unknown path does.
            let refused = try await HTTPTestClient.request("POST", port: keyless.port, path: InternalNotificationRoutes.path, body: Data("{}".utf8))
            #expect(refused.status == 404, "\(refused.text)")
            await keyless.stop()
        }
    }
}
