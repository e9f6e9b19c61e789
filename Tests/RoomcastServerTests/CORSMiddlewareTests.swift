import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import RoomcastCore
@testable import RoomcastServer
import Testing

@Suite("HTTP: cross-origin access (http.cors_origins)")
struct CORSMiddlewareTests {
    func makeApplication(_ origins: CORSOrigins) -> some ApplicationProtocol {
        let router = Router(context: RoomcastRequestContext.self)
        router.add(middleware: CORSMiddleware(origins: origins))
        router.add(middleware: ErrorMiddleware())
        router.get("/socket.io") { _, _ in "ok" }
        router.get("/fails") { _, _ -> String in throw RoomcastError(.notFound, "no such thing") }
        return Application(router: router)
    }

    static let app = CORSOrigins(setting: "https://app.example.com, http://localhost:3000/")!

    @Test("a listed origin gets its own origin back, with credentials, on answers and on errors")
    func listedOrigin() async throws {
        try await makeApplication(Self.app).test(.router) { client in
            try await client.execute(uri: "/socket.io", method: .get, headers: [.origin: "https://app.example.com"]) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.accessControlAllowOrigin] == "https://app.example.com")
                #expect(response.headers[.accessControlAllowCredentials] == "true")
                #expect(response.headers[.vary] == "Origin")
            }
            try await client.execute(uri: "/fails", method: .get, headers: [.origin: "http://localhost:3000"]) { response in
                #expect(response.status == .notFound)
                #expect(response.headers[.accessControlAllowOrigin] == "http://localhost:3000")
            }
        }
    }

    @Test("another origin, or none, gets no CORS headers; the request is still served")
    func otherOrigins() async throws {
        try await makeApplication(Self.app).test(.router) { client in
            try await client.execute(uri: "/socket.io", method: .get, headers: [.origin: "https://evil.example.com"]) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.accessControlAllowOrigin] == nil)
            }
            try await client.execute(uri: "/socket.io", method: .get) { response in
                #expect(response.headers[.accessControlAllowOrigin] == nil)
            }
        }
    }

    @Test("a preflight is answered by the middleware with the methods and the headers asked for")
    func preflight() async throws {
        try await makeApplication(Self.app).test(.router) { client in
            let headers: HTTPFields = [
                .origin: "https://app.example.com", .accessControlRequestMethod: "POST",
                .accessControlRequestHeaders: "authorization, content-type",
            ]
            try await client.execute(uri: "/api/rooms", method: .options, headers: headers) { response in
                #expect(response.status == .noContent)
                #expect(response.headers[.accessControlAllowOrigin] == "https://app.example.com")
                #expect(response.headers[.accessControlAllowMethods]?.contains("POST") == true)
                #expect(response.headers[.accessControlAllowHeaders] == "authorization, content-type")
            }
        }
    }

    @Test("`*` allows any origin; malformed settings are refused")
    func parsing() {
        let any = CORSOrigins(setting: "*")
        #expect(any?.any == true)
        #expect(any?.allows("https://whatever.example") == true)
        #expect(CORSOrigins(setting: "")?.isEmpty == true)
        #expect(Self.app.listed == ["https://app.example.com", "http://localhost:3000"])
        #expect(CORSOrigins(setting: "app.example.com") == nil)
        #expect(CORSOrigins(setting: "https://app.example.com/path") == nil)
        #expect(CORSOrigins(setting: "ftp://files.example.com") == nil)
    }

    @Test("the setting is read from the environment and a bad one names its key")
    func setting() async throws {
        let settings = try await GatewaySettings.load(
            configFile: "/nonexistent/roomcast.yaml", requireFile: false, overrides: [:],
            environment: ["ROOMCAST_HTTP_CORS_ORIGINS": "https://app.example.com"]
        )
        #expect(settings.corsOrigins.listed == ["https://app.example.com"])
        let error = await #expect(throws: ConfigurationError.self) {
            try await GatewaySettings.load(
                configFile: "/nonexistent/roomcast.yaml", requireFile: false, overrides: [:],
                environment: ["ROOMCAST_HTTP_CORS_ORIGINS": "not an origin"]
            )
        }
        #expect(error?.key == "http.cors_origins")
    }
}
