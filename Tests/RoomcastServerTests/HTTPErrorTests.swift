import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import RoomcastCore
@testable import RoomcastServer
import Testing

@Suite("HTTP: error rendering, ErrorMiddleware and APIResponse")
struct HTTPErrorTests {
    struct Greeting: Codable, Sendable {
        var name: String
        var count: Int
    }

    static let createdAt = Timestamp(milliseconds: 1_700_000_000_123)

    struct Opaque: Error, CustomStringConvertible {
        var description: String { "database password is hunter2" }
    }

    /// A router with the error middleware and routes that fail in every way.
    func makeApplication() -> some ApplicationProtocol {
        let router = Router(context: RoomcastRequestContext.self)
        router.add(middleware: ErrorMiddleware())
        router.get("/error/{code}") { _, context -> String in
            let code = try context.parameters.require("code")
            throw RoomcastError(.init(rawValue: code), "failed with \(code)")
        }
        router.post("/greetings") { request, context in
            let greeting = try await request.decode(as: Greeting.self, context: context)
            return APIResponse(status: .created, greeting)
        }
        router.get("/greetings") { _, _ in
            APIResponse([Greeting(name: "a", count: 1)])
        }
        router.get("/user") { _, _ in
            APIResponse(User(id: UserID("alice")!, username: "alice", createdAt: Self.createdAt))
        }
        router.get("/decoding") { _, _ -> String in
            _ = try JSONDecoder().decode(Greeting.self, from: Data(#"{"name":"a"}"#.utf8))
            return "unreachable"
        }
        router.get("/opaque") { _, _ -> String in throw Opaque() }
        router.get("/http/{status}") { _, context -> String in
            let status = try context.parameters.require("status", as: Int.self)
            throw HTTPError(.init(code: status))
        }
        router.get("/large") { request, _ -> String in
            _ = try await request.body.collect(upTo: 10)
            return "unreachable"
        }
        return Application(router: router)
    }

    @Test("each code has its status", arguments: [
        (RoomcastError.Code.invalidPayload, HTTPResponse.Status.badRequest),
        (.malformedPacket, .badRequest),
        (.unknownEvent, .badRequest),
        (.unauthorized, .unauthorized),
        (.tokenExpired, .unauthorized),
        (.forbidden, .forbidden),
        (.notFound, .notFound),
        (.conflict, .conflict),
        (.payloadTooLarge, .contentTooLarge),
        (.rateLimited, .tooManyRequests),
        (.unavailable, .serviceUnavailable),
        (.internalError, .internalServerError),
        (.init(rawValue: "something_new"), .internalServerError),
    ])
    func statusByCode(code: RoomcastError.Code, status: HTTPResponse.Status) {
        #expect(RoomcastError(code, "m").status == status)
    }

    @Test("a thrown RoomcastError becomes its status and a JSON body", arguments: [
        ("forbidden", 403), ("not_found", 404), ("conflict", 409), ("token_expired", 401),
        ("invalid_payload", 400), ("rate_limited", 429), ("unavailable", 503),
    ])
    func rendered(code: String, status: Int) async throws {
        try await makeApplication().test(.router) { client in
            try await client.execute(uri: "/error/\(code)", method: .get) { response in
                let message = try response.expectError(.init(code: status), code)
                #expect(message == "failed with \(code)")
                // Exactly these keys, nothing else.
                let object = try JSONSerialization.jsonObject(with: Data(response.body.readableBytesView)) as? NSDictionary
                #expect(object == ["error": ["code": code, "message": "failed with \(code)"]])
            }
        }
    }

    @Test("a body that is not JSON, or misses or mistypes a field, is invalid_payload", arguments: [
        "{not json", "", "[]", #"{"name":"a"}"#, #"{"name":"a","count":"one"}"#, #"{"name":null,"count":1}"#,
    ])
    func badBody(body: String) async throws {
        _ = try await makeApplication().test(.router) { client in
            try await client.execute(uri: "/greetings", method: .post, body: ByteBuffer(string: body)) { response in
                try response.expectError(.badRequest, "invalid_payload")
            }
        }
    }

    @Test("a missing field is named in the message")
    func missingFieldMessage() async throws {
        try await makeApplication().test(.router) { client in
            try await client.execute(uri: "/greetings", method: .post, body: ByteBuffer(string: #"{"name":"a"}"#)) { response in
                let message = try response.expectError(.badRequest, "invalid_payload")
                #expect(message.contains("count"))
            }
            try await client.execute(uri: "/decoding", method: .get) { response in
                let message = try response.expectError(.badRequest, "invalid_payload")
                #expect(message.contains("count"))
            }
        }
    }

    @Test("a body up to 1 MiB decodes; one byte more is payload_too_large")
    func uploadLimit() async throws {
        @Sendable func body(size: Int) -> ByteBuffer {
            let prefix = #"{"name":""#, suffix = #"","count":1}"#
            return ByteBuffer(string: prefix + String(repeating: "x", count: size - prefix.utf8.count - suffix.utf8.count) + suffix)
        }
        let limit = RoomcastRequestContext.defaultMaxUploadSize
        #expect(limit == 1_048_576)
        try await makeApplication().test(.router) { client in
            try await client.execute(uri: "/greetings", method: .post, body: body(size: limit)) { response in
                #expect(response.status == .created)
            }
            try await client.execute(uri: "/greetings", method: .post, body: body(size: limit + 1)) { response in
                let message = try response.expectError(.contentTooLarge, "payload_too_large")
                #expect(message.contains("1048576"))
            }
            try await client.execute(uri: "/large", method: .get, body: ByteBuffer(string: "more than ten bytes")) { response in
                try response.expectError(.contentTooLarge, "payload_too_large")
            }
        }
    }

    @Test("an unknown route is not_found")
    func unknownRoute() async throws {
        try await makeApplication().test(.router) { client in
            try await client.execute(uri: "/nowhere", method: .get) { response in
                try response.expectError(.notFound, "not_found")
            }
            try await client.execute(uri: "/greetings", method: .delete) { response in
                try response.expectError(.notFound, "not_found")
            }
        }
    }

    @Test("an unexpected error is a generic 500 internal")
    func unexpected() async throws {
        try await makeApplication().test(.router) { client in
            try await client.execute(uri: "/opaque", method: .get) { response in
                let message = try response.expectError(.internalServerError, "internal")
                #expect(message == "internal server error")
                #expect(!response.text.contains("hunter2"))
            }
        }
    }

    @Test("Hummingbird HTTP errors map by status", arguments: [
        (401, 401, "unauthorized"), (403, 403, "forbidden"), (409, 409, "conflict"), (429, 429, "rate_limited"),
        (503, 503, "unavailable"), (405, 400, "invalid_payload"), (422, 400, "invalid_payload"), (500, 500, "internal"),
        (502, 500, "internal"),
    ])
    func httpErrors(thrown: Int, status: Int, code: String) async throws {
        _ = try await makeApplication().test(.router) { client in
            try await client.execute(uri: "/http/\(thrown)", method: .get) { response in
                try response.expectError(.init(code: status), code)
            }
        }
    }

    @Test("APIResponse wraps the value in data, with its status")
    func apiResponse() async throws {
        try await makeApplication().test(.router) { client in
            try await client.execute(uri: "/greetings", method: .post, body: ByteBuffer(string: #"{"name":"a","count":2}"#)) { response in
                #expect(response.status == .created)
                #expect(response.headers[.contentType] == "application/json; charset=utf-8")
                let object = try JSONSerialization.jsonObject(with: Data(response.body.readableBytesView)) as? NSDictionary
                #expect(object == ["data": ["name": "a", "count": 2]])
            }
            try await client.execute(uri: "/greetings", method: .get) { response in
                #expect(response.status == .ok)
                let object = try JSONSerialization.jsonObject(with: Data(response.body.readableBytesView)) as? NSDictionary
                #expect(object == ["data": [["name": "a", "count": 1]]])
            }
            try await client.execute(uri: "/user", method: .get) { response in
                struct Envelope: Decodable {
                    struct Body: Decodable {
                        var id: String
                        var createdAt: String
                    }
                    var data: Body
                }
                let envelope = try response.decoded(as: Envelope.self)
                #expect(envelope.data.id == "alice")
                // Timestamp encodes itself: ISO 8601 UTC with milliseconds, no encoder setting.
                #expect(envelope.data.createdAt == "2023-11-14T22:13:20.123Z")
            }
        }
    }
}
