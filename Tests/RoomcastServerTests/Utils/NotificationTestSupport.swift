import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import RedisClient
import RoomcastCore
import RoomcastTestSupport
import Testing

/// Helpers shared by the notification suites (notifications, badges, push tokens, the push outbox):
/// the REST calls a client or a backend service makes, and reads of the push streams.
enum NotificationAPI {
    /// The service key test clusters are started with (`notifications.service_key`).
    static let serviceKey = "roomcast-test-service-key-0123456789"
    /// The environment that turns the internal endpoint on.
    static let environment = ["ROOMCAST_NOTIFICATIONS_SERVICE_KEY": serviceKey]

    typealias Response = ElementSocketTests.Response

    /// `POST /api/internal/notifications` with `body` (raw JSON) and, unless nil, the key header.
    static func raw(_ body: String, key: String? = serviceKey, on node: GatewayProcess) async throws -> Response {
        var headers = ["Content-Type": "application/json"]
        if let key { headers["X-Roomcast-Service-Key"] = key }
        let response = try await HTTPTestClient.request(
            "POST", port: node.port, path: "/api/internal/notifications", headers: headers, body: Data(body.utf8)
        )
        return Response(status: response.status, json: response.text.isEmpty ? .null : try JSONValue(response.text))
    }

    /// The body of an internal create for `user`, with every optional field settable.
    static func body(
        for user: TestUser, type: String = "comment", title: String = "Someone commented", text: String? = nil, id: String? = nil,
        actor: TestUser? = nil, roomId: String? = nil, elementId: String? = nil, data: [String: String]? = nil
    ) -> JSONValue {
        var body: [String: JSONValue] = ["userId": .string(user.id), "type": .string(type), "title": .string(title)]
        if let text { body["body"] = .string(text) }
        if let id { body["id"] = .string(id) }
        if let actor { body["actorId"] = .string(actor.id) }
        if let roomId { body["roomId"] = .string(roomId) }
        if let elementId { body["elementId"] = .string(elementId) }
        if let data { body["data"] = .object(data.mapValues(JSONValue.string)) }
        return .object(body)
    }

    /// Creates a notification through the internal endpoint and checks the 201 envelope.
    /// - Returns: the notification and the unread count after it.
    @discardableResult
    static func create(
        for user: TestUser, type: String = "comment", title: String = "Someone commented", text: String? = nil, id: String? = nil,
        actor: TestUser? = nil, data: [String: String]? = nil, on node: GatewayProcess,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> (notification: JSONValue, unreadCount: Int) {
        let response = try await raw(
            body(for: user, type: type, title: title, text: text, id: id, actor: actor, data: data).description, on: node
        )
        #expect(response.status == 201, "\(response.json)", sourceLocation: sourceLocation)
        #expect(response.json.memberNames == ["data"], "\(response.json)", sourceLocation: sourceLocation)
        #expect(response.json["data"].memberNames == ["notification", "unreadCount"], "\(response.json)", sourceLocation: sourceLocation)
        let unread = try #require(response.json["data"]["unreadCount"].intValue, "\(response.json)", sourceLocation: sourceLocation)
        return (response.json["data"]["notification"], unread)
    }

    /// `GET /api/notifications` (with `query`, e.g. `?limit=2`) for `user`; checks the 200.
    static func list(_ user: TestUser, query: String = "", on node: GatewayProcess, sourceLocation: SourceLocation = #_sourceLocation) async throws -> (
        notifications: [JSONValue], nextCursor: String?
    ) {
        let response = try await ElementSocketTests.rest("GET", "/api/notifications" + query, as: user, on: node)
        #expect(response.status == 200, "\(response.json)", sourceLocation: sourceLocation)
        #expect(response.json.memberNames == ["data", "nextCursor"], "\(response.json)", sourceLocation: sourceLocation)
        let notifications = try #require(response.json["data"].arrayValue, "\(response.json)", sourceLocation: sourceLocation)
        return (notifications, response.json["nextCursor"].stringValue)
    }

    /// `GET /api/notifications/unread-count` for `user`.
    static func unreadCount(_ user: TestUser, on node: GatewayProcess, sourceLocation: SourceLocation = #_sourceLocation) async throws -> Int? {
        let response = try await ElementSocketTests.rest("GET", "/api/notifications/unread-count", as: user, on: node)
        #expect(response.status == 200, "\(response.json)", sourceLocation: sourceLocation)
        #expect(response.json["data"].memberNames == ["unreadCount"], "\(response.json)", sourceLocation: sourceLocation)
        return response.json["data"]["unreadCount"].intValue
    }

    /// `POST /api/notifications/:id/read` for `user`.
    static func read(_ id: String, as user: TestUser, on node: GatewayProcess) async throws -> Response {
        try await ElementSocketTests.rest("POST", "/api/notifications/\(id)/read", as: user, on: node)
    }

    /// `POST /api/notifications/read-all` for `user`.
    static func readAll(_ user: TestUser, on node: GatewayProcess) async throws -> Response {
        try await ElementSocketTests.rest("POST", "/api/notifications/read-all", as: user, on: node)
    }

    /// `PUT /api/users/me/push-token` for `user`.
    static func registerToken(_ token: String, platform: String = "ios", as user: TestUser, on node: GatewayProcess) async throws -> Response {
        let body: JSONValue = ["token": .string(token), "platform": .string(platform)]
        return try await ElementSocketTests.rest("PUT", "/api/users/me/push-token", as: user, body: body.description, on: node)
    }

    /// The tokens of `platform` that `GET /api/users/me/push-tokens` lists for `user`.
    static func tokens(
        of user: TestUser, platform: String = "ios", on node: GatewayProcess, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> [String] {
        let response = try await ElementSocketTests.rest("GET", "/api/users/me/push-tokens", as: user, on: node)
        #expect(response.status == 200, "\(response.json)", sourceLocation: sourceLocation)
        let devices = try #require(response.json["data"].arrayValue, "\(response.json)", sourceLocation: sourceLocation)
        for device in devices {
            #expect(device.memberNames == ["token", "platform"], "\(device)", sourceLocation: sourceLocation)
            #expect(["ios", "fcm"].contains(device["platform"].stringValue ?? ""), "\(device)", sourceLocation: sourceLocation)
        }
        return devices.filter { $0["platform"].stringValue == platform }.compactMap { $0["token"].stringValue }
    }

    /// A device token: 64 lowercase hex digits, distinct per `seed`.
    static func deviceToken(_ seed: Int) -> String {
        let hex = String(seed, radix: 16)
        return "a1b2" + String(repeating: "0", count: 60 - hex.count) + hex
    }

    /// An FCM registration token: `<instance id>:APA91b…`, mixed case, distinct per `seed`.
    static func fcmToken(_ seed: Int) -> String {
        "dXbcF\(seed):APA91bHun4MxP5egoKMwt2KZFBaFUH-1RYqx" + String(repeating: "Zq_9", count: 30)
    }

    // MARK: Streams

    /// Entries of a stream (`XRANGE key - +`) as id and fields.
    static func streamEntries(_ redis: any RedisClientProtocol, _ key: String) async throws -> [(id: String, fields: [String: String])] {
        let reply = try await redis.send("XRANGE", key, "-", "+")
        guard case .array(let entries) = reply else { return [] }
        return entries.compactMap { entry in
            guard case .array(let pair) = entry, pair.count == 2, let id = pair[0].string else { return nil }
            return (id, pair[1].fields)
        }
    }

    /// `XLEN key`.
    static func length(_ redis: any RedisClientProtocol, _ key: String) async throws -> Int {
        guard case .integer(let count) = try await redis.send("XLEN", key) else { return -1 }
        return Int(count)
    }

    /// Jobs pending in the push workers' group (`XPENDING` summary count); 0 without the group.
    static func pendingCount(_ redis: any RedisClientProtocol, stream: String = outbox) async throws -> Int {
        let reply: RedisReply
        do {
            reply = try await redis.send("XPENDING", stream, "push-workers")
        } catch {
            // No worker ever created the group.
            if "\(error)".contains("NOGROUP") { return 0 }
            throw error
        }
        guard case .array(let parts) = reply, case .integer(let count)? = parts.first else { return -1 }
        return Int(count)
    }

    static let outbox = "push:{outbox}"
    static let fcmOutbox = "push:{outbox}:fcm"
    static let deadLetters = "push:{outbox}:dead"
}

extension JSONValue {
    /// The member names of an object (empty for anything else).
    var memberNames: Set<String> { Set(objectValue.map { Array($0.keys) } ?? []) }
}

/// Sends `count` requests at once, each on its own connection, so that they are all in flight at
/// the gateways together (the blocking `HTTPTestClient` would run two at a time on two cores).
enum ConcurrentHTTP {
    struct Outcome: Sendable {
        var status: Int
        var body: String
    }

    /// `requests[i]` is (port, method, path, bearer token); answers come back in the same order.
    static func send(_ requests: [(port: Int, method: String, path: String, token: String)]) async throws -> [Outcome] {
        try await withThrowingTaskGroup(of: (Int, Outcome).self) { group in
            for (index, request) in requests.enumerated() {
                group.addTask {
                    let method = try #require(HTTPRequest.Method(request.method))
                    return try await TestClient.withClient(host: "127.0.0.1", port: request.port) { client in
                        let response = try await client.execute(
                            TestClient.Request(request.path, method: method, headers: [.authorization: "Bearer \(request.token)"])
                        )
                        return (index, Outcome(status: response.status.code, body: response.body.map { String(buffer: $0) } ?? ""))
                    }
                }
            }
            var outcomes = [Outcome?](repeating: nil, count: requests.count)
            for try await (index, outcome) in group { outcomes[index] = outcome }
            return outcomes.map { $0 ?? Outcome(status: -1, body: "") }
        }
    }
}
