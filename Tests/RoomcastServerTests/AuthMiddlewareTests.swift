import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import RoomcastCore
@testable import RoomcastServer
import Testing

@Suite("AuthMiddleware: Bearer tokens on REST routes")
struct AuthMiddlewareTests {
    let tokens = TokenService(secret: "roomcast-auth-middleware-secret-0123456789", lifetime: .seconds(3600))

    struct Me: Codable, Sendable {
        var id: String
    }

    func makeApplication() -> some ApplicationProtocol {
        let router = Router(context: RoomcastRequestContext.self)
        router.add(middleware: ErrorMiddleware())
        router.add(middleware: AuthMiddleware(tokens: tokens))
        router.get("/me") { _, context in
            APIResponse(Me(id: try context.requireUser().rawValue))
        }
        router.get("/open") { _, context in
            context.userID?.rawValue ?? "anonymous"
        }
        return Application(router: router)
    }

    @Test("a valid token sets the user")
    func valid() async throws {
        let token = try await tokens.issue(for: UserID("alice")!)
        try await makeApplication().test(.router) { client in
            for scheme in ["Bearer", "bearer"] {
                try await client.execute(uri: "/me", method: .get, headers: [.authorization: "\(scheme) \(token)"]) { response in
                    #expect(response.status == .ok)
                    let body = try response.decoded(as: [String: Me].self)
                    #expect(body["data"]?.id == "alice")
                }
            }
            try await client.execute(uri: "/open", method: .get, headers: [.authorization: "Bearer \(token)"]) { response in
                #expect(response.text == "alice")
            }
        }
    }

    @Test("an expired token is 401 token_expired, even on an open route")
    func expired() async throws {
        let token = try await tokens.issue(for: UserID("alice")!, now: .now.addingTimeInterval(-7200))
        try await makeApplication().test(.router) { client in
            for uri in ["/me", "/open"] {
                try await client.execute(uri: uri, method: .get, headers: [.authorization: "Bearer \(token)"]) { response in
                    try response.expectError(.unauthorized, "token_expired")
                }
            }
        }
    }

    @Test("without a token, open routes are anonymous and others 401 unauthorized")
    func missing() async throws {
        try await makeApplication().test(.router) { client in
            try await client.execute(uri: "/me", method: .get) { response in
                try response.expectError(.unauthorized, "unauthorized")
            }
            try await client.execute(uri: "/open", method: .get) { response in
                #expect(response.status == .ok)
                #expect(response.text == "anonymous")
            }
        }
    }

    @Test("a bad token or another scheme is 401 unauthorized", arguments: [
        "Bearer garbage", "Bearer ", "Basic YWxpY2U6cHc=", "Bearer a.b.c",
    ])
    func invalid(header: String) async throws {
        _ = try await makeApplication().test(.router) { client in
            try await client.execute(uri: "/open", method: .get, headers: [.authorization: header]) { response in
                try response.expectError(.unauthorized, "unauthorized")
            }
        }
    }
}
