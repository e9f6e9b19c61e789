import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import RoomcastTestSupport
@testable import RoomcastServer
import Testing

/// schemathesis's `unsupported_method` check found that a method a path does not serve was 404
/// `not_found` ("no route for TRACE /healthz"): it is 405 `method_not_allowed` with `Allow`.
@Suite("HTTP: 405 with Allow for a method a route does not serve")
struct MethodNotAllowedTests {
    /// The gateway's own router; none of these requests reaches Redis.
    func makeApplication() throws -> some ApplicationProtocol {
        var settings = GatewaySettings()
        settings.jwtSecret = GatewayProcess.jwtSecret
        let node = try Gateway(settings: settings, logger: Logger(label: "405-test")).assemble(secret: GatewayProcess.jwtSecret)
        return Application(router: node.router)
    }

    @Test("a path served under other methods answers 405 with the methods it has", arguments: [
        (HTTPRequest.Method.trace, "/healthz", "GET"),
        (.delete, "/api/rooms", "POST"),
        (.post, "/api/users/me", "GET, PUT"),
        (.get, "/api/rooms/r1/elements/e1", "DELETE, PATCH"),
        (.put, "/console/", "GET"),
        (.trace, "/api/notifications/n1/read", "POST"),
        (.head, "/api/openapi.json", "GET"),
    ])
    func methodNotAllowed(method: HTTPRequest.Method, path: String, allow: String) async throws {
        try await makeApplication().test(.router) { client in
            try await client.execute(uri: path, method: method, headers: [.authorization: "Bearer not-even-a-token"]) { response in
                #expect(response.status == .methodNotAllowed)
                #expect(response.headers[.allow] == allow)
                if method != .head {
                    let message = try response.expectError(.methodNotAllowed, "method_not_allowed")
                    #expect(message.contains(allow))
                }
            }
        }
    }

    @Test("an unknown path is still 404 not_found, and a route's own not_found stays 404")
    func unknownPath() async throws {
        try await makeApplication().test(.router) { client in
            try await client.execute(uri: "/api/nowhere", method: .trace) { response in
                try response.expectError(.notFound, "not_found")
                #expect(response.headers[.allow] == nil)
            }
            try await client.execute(uri: "/api/rooms/not%20an%20id", method: .get, headers: [.authorization: "Bearer x"]) { response in
                // The token is checked first: a route answered, so no 405.
                #expect(response.status == .unauthorized)
                #expect(response.headers[.allow] == nil)
            }
        }
    }
}
