import Foundation
import NIOCore
import RedisClient
import RoomcastTestSupport
import Synchronization
import Testing

/// The push workers with FCM beside APNs: the token's platform picks the service, FCM's answers
/// decide what becomes of tokens and jobs as APNs's do, and a platform without credentials keeps
/// its jobs waiting. Against `LocalFCMServer` (Google's token endpoint and FCM in one).
extension PushWorkerTests {
    /// A service account's key file pointing at a stand-in, and the settings that turn FCM on.
    struct FCMCredentials {
        let path: String

        init(server: LocalFCMServer) throws {
            path = FileManager.default.temporaryDirectory.appendingPathComponent("roomcast-fcm-\(UUID().uuidString.prefix(8)).json").path
            try server.serviceAccountJSON.write(toFile: path, atomically: true, encoding: .utf8)
        }

        func environment(server: LocalFCMServer, requestTimeoutMilliseconds: Int = 2000) -> [String: String] {
            [
                "ROOMCAST_FCM_SERVICE_ACCOUNT_PATH": path,
                "ROOMCAST_FCM_ENDPOINT": server.url,
                "ROOMCAST_FCM_REQUEST_TIMEOUT_MS": "\(requestTimeoutMilliseconds)",
            ]
        }

        func remove() {
            try? FileManager.default.removeItem(atPath: path)
        }
    }

    /// Runs `body` with a started FCM stand-in, shutting it down whatever happens.
    static func withFCMServer(
        respond: @escaping @Sendable (LocalFCMServer.Message) async -> HTTP2StubResponse,
        _ body: (LocalFCMServer, FCMCredentials) async throws -> Void
    ) async throws {
        let server = try await LocalFCMServer.start(account: try FCMTestAccount.generate(), respond: respond)
        let credentials: FCMCredentials
        do {
            credentials = try FCMCredentials(server: server)
        } catch {
            try? await server.shutdown()
            throw error
        }
        defer { credentials.remove() }
        do {
            try await body(server, credentials)
        } catch {
            try? await server.shutdown()
            throw error
        }
        try await server.shutdown()
    }

    static func messages(_ server: LocalFCMServer, for token: String) -> [LocalFCMServer.Message] {
        server.messages().filter { $0.token == token }
    }

    /// Checks one `messages:send` body: the token, the notification, string data and the badge.
    static func expectMessage(
        _ message: LocalFCMServer.Message, token: String, notification: String, title: String, badge: Int,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let body = message.json["message"]
        #expect(message.json.memberNames == ["message"], "\(message.json)", sourceLocation: sourceLocation)
        #expect(body["token"].stringValue == token, sourceLocation: sourceLocation)
        #expect(body["notification"]["title"].stringValue == title, "\(body)", sourceLocation: sourceLocation)
        #expect(body["notification"]["body"].stringValue != nil, "\(body)", sourceLocation: sourceLocation)
        #expect(body["data"]["notificationId"].stringValue == notification, "\(body)", sourceLocation: sourceLocation)
        #expect(body["data"]["type"].stringValue != nil, "\(body)", sourceLocation: sourceLocation)
        // FCM takes strings only in data.
        for name in body["data"].memberNames {
            #expect(body["data"][name].stringValue != nil, "data.\(name) is not a string: \(body)", sourceLocation: sourceLocation)
        }
        #expect(body["apns"]["payload"]["aps"]["badge"].intValue == badge, "\(body)", sourceLocation: sourceLocation)
        #expect(message.request.path.hasSuffix("/messages:send"), sourceLocation: sourceLocation)
    }

    @Test("an fcm token goes to FCM and an ios token to APNs, each once with the badge; the key file is exchanged for one access token per node")
    func platformPicksTheService() async throws {
        let apnsCredentials = try Credentials()
        defer { apnsCredentials.remove() }
        let iosToken = NotificationAPI.deviceToken(301)
        let fcmToken = NotificationAPI.fcmToken(302)
        try await Self.withServer(respond: { _ in .ok }) { apns in
            try await Self.withFCMServer(respond: LocalFCMServer.accepted) { fcm, fcmCredentials in
                let environment = apnsCredentials.environment(server: apns).merging(fcmCredentials.environment(server: fcm)) { $1 }
                try await TwoNodeCluster.with(environment: environment) { cluster in
                    let alice = try await cluster.register("alice")
                    #expect(try await NotificationAPI.registerToken(iosToken, as: alice, on: cluster.node1).status == 200)
                    #expect(try await NotificationAPI.registerToken(fcmToken, platform: "fcm", as: alice, on: cluster.node2).status == 200)
                    #expect(try await NotificationAPI.tokens(of: alice, platform: "fcm", on: cluster.node1) == [fcmToken])

                    var created: [(id: String, badge: Int, title: String)] = []
                    for index in 1...2 {
                        let title = "Comment \(index)"
                        let result = try await NotificationAPI.create(for: alice, title: title, on: index == 1 ? cluster.node1 : cluster.node2)
                        created.append((try #require(result.notification["id"].stringValue), result.unreadCount, title))
                    }
                    let delivered = try await eventually(within: .seconds(20)) {
                        guard Self.requests(apns, for: iosToken).count >= 2, Self.messages(fcm, for: fcmToken).count >= 2 else { return false }
                        return try await cluster.withRedis { redis in
                            for stream in [NotificationAPI.outbox, NotificationAPI.fcmOutbox] {
                                guard try await NotificationAPI.length(redis, stream) == 0,
                                    try await NotificationAPI.pendingCount(redis, stream: stream) == 0
                                else { return false }
                            }
                            return true
                        }
                    }
                    #expect(delivered, "APNs: \(apns.recordedRequests().map(\.path)); FCM: \(fcm.messages().map(\.token))")

                    // Each service saw only its own platform's device, once per notification.
                    #expect(apns.recordedRequests().count == 2)
                    #expect(fcm.messages().count == 2)
                    for request in Self.requests(apns, for: iosToken) {
                        let notification = request.headers["apns-collapse-id"] ?? ""
                        let badge = created.first { $0.id == notification }?.badge ?? -1
                        try Self.expectRequest(request, token: iosToken, notification: notification, badge: badge, credentials: apnsCredentials)
                    }
                    let sent = Self.messages(fcm, for: fcmToken)
                    #expect(Set(sent.compactMap { $0.json["message"]["data"]["notificationId"].stringValue }) == Set(created.map(\.id)))
                    for message in sent {
                        let id = message.json["message"]["data"]["notificationId"].stringValue ?? ""
                        let expected = try #require(created.first { $0.id == id })
                        Self.expectMessage(message, token: fcmToken, notification: id, title: expected.title, badge: expected.badge)
                    }
                    // One exchange per node at most, each assertion verified by the stand-in.
                    let exchanges = fcm.exchanges()
                    #expect((1...2).contains(exchanges.count), "\(exchanges.count) exchanges")
                    #expect(exchanges.allSatisfy { $0.failure == nil }, "\(exchanges.compactMap(\.failure))")
                    #expect(fcm.unauthorizedCount() == 0)
                }
            }
        }
    }

    @Test("FCM answers: 404 and UNREGISTERED remove the token, 500 retries then dead-letters, 429 retries, 400 dead-letters at once")
    func fcmFailures() async throws {
        let gone = NotificationAPI.fcmToken(401)
        let unregistered = NotificationAPI.fcmToken(402)
        let failing = NotificationAPI.fcmToken(403)
        let invalid = NotificationAPI.fcmToken(404)
        let throttled = NotificationAPI.fcmToken(405)
        let throttledOnce = Mutex(false)
        let respond: @Sendable (LocalFCMServer.Message) async -> HTTP2StubResponse = { message in
            switch message.token {
            case gone: return LocalFCMServer.unregistered
            case unregistered: return LocalFCMServer.fcmError(status: 400, canonical: "INVALID_ARGUMENT", errorCode: "UNREGISTERED")
            case failing: return LocalFCMServer.fcmError(status: 500, canonical: "INTERNAL", errorCode: "INTERNAL")
            case invalid: return LocalFCMServer.fcmError(status: 400, canonical: "INVALID_ARGUMENT", errorCode: "INVALID_ARGUMENT", message: "bad message")
            case throttled:
                let first = throttledOnce.withLock { seen in
                    defer { seen = true }
                    return !seen
                }
                return first ? LocalFCMServer.fcmError(status: 429, canonical: "RESOURCE_EXHAUSTED", errorCode: "QUOTA_EXCEEDED") : LocalFCMServer.accepted(message)
            default: return LocalFCMServer.accepted(message)
            }
        }
        try await Self.withFCMServer(respond: respond) { fcm, credentials in
            // Each count below is exact, so no answer may come later than the timeout: a node's
            // first send connects and exchanges its key for a token too, which a loaded machine
            // can stretch past 2 s. Retries wait twice the timeout.
            let fcmSettings = credentials.environment(server: fcm, requestTimeoutMilliseconds: 5000)
            let environment = NotificationAPI.environment.merging(fcmSettings) { $1 }.merging([
                "ROOMCAST_PUSH_RETRY_DELAY_MS": "100", "ROOMCAST_PUSH_MAX_ATTEMPTS": "3", "ROOMCAST_PUSH_POLL_INTERVAL_MS": "50",
            ]) { $1 }
            try await TwoNodeCluster.with(environment: environment) { cluster in
                var users: [String: TestUser] = [:]
                var notificationOf: [String: String] = [:]
                for (name, token) in [("bob", gone), ("carol", unregistered), ("dave", failing), ("erin", invalid), ("frank", throttled)] {
                    let user = try await cluster.register(name)
                    users[token] = user
                    #expect(try await NotificationAPI.registerToken(token, platform: "fcm", as: user, on: cluster.node1).status == 200)
                    let created = try await NotificationAPI.create(for: user, title: "For \(name)", on: cluster.node2)
                    notificationOf[token] = created.notification["id"].stringValue
                }
                let settled = try await eventually(within: .seconds(60)) {
                    try await cluster.withRedis { redis in
                        let dead = try await NotificationAPI.length(redis, NotificationAPI.deadLetters)
                        let queued = try await NotificationAPI.length(redis, NotificationAPI.fcmOutbox)
                        let pending = try await NotificationAPI.pendingCount(redis, stream: NotificationAPI.fcmOutbox)
                        return dead >= 2 && queued == 0 && pending == 0
                    }
                }
                #expect(settled, "messages: \(fcm.messages().map(\.token))")
                #expect(Self.messages(fcm, for: gone).count == 1)
                #expect(Self.messages(fcm, for: unregistered).count == 1)
                #expect(Self.messages(fcm, for: failing).count == 3)
                #expect(Self.messages(fcm, for: invalid).count == 1)
                #expect(Self.messages(fcm, for: throttled).count == 2)
                for (token, user) in users {
                    for message in Self.messages(fcm, for: token) {
                        Self.expectMessage(message, token: token, notification: notificationOf[token] ?? "", title: "For \(user.username)", badge: 1)
                    }
                }
                // Unregistered: both tokens gone; the others kept.
                for token in [gone, unregistered] {
                    let user = try #require(users[token])
                    #expect(try await NotificationAPI.tokens(of: user, platform: "fcm", on: cluster.node2).isEmpty, "\(user.username)")
                }
                for token in [failing, invalid, throttled] {
                    let user = try #require(users[token])
                    #expect(try await NotificationAPI.tokens(of: user, platform: "fcm", on: cluster.node2) == [token], "\(user.username)")
                }

                let dead = try await cluster.withRedis { redis in try await NotificationAPI.streamEntries(redis, NotificationAPI.deadLetters) }
                #expect(dead.count == 2, "\(dead.map(\.fields))")
                let failed = try #require(dead.first { $0.fields["token"] == failing }, "\(dead.map(\.fields))")
                #expect(failed.fields["platform"] == "fcm")
                #expect(failed.fields["attempts"] == "3", "\(failed.fields)")
                #expect(failed.fields["reason"]?.contains("500") == true, "\(failed.fields)")
                #expect((try? JSONValue(failed.fields["payload"] ?? ""))?["message"]["apns"]["payload"]["aps"]["badge"] == 1)
                let refused = try #require(dead.first { $0.fields["token"] == invalid }, "\(dead.map(\.fields))")
                #expect(refused.fields["attempts"] == "1", "\(refused.fields)")
                #expect(refused.fields["reason"] == "refused by FCM: status 400 INVALID_ARGUMENT INVALID_ARGUMENT: bad message", "\(refused.fields)")
            }
        }
    }

    @Test("without fcm settings, fcm jobs wait in their outbox while ios jobs are delivered")
    func fcmJobsWaitWithoutCredentials() async throws {
        let credentials = try Credentials()
        defer { credentials.remove() }
        let iosToken = NotificationAPI.deviceToken(501)
        let fcmToken = NotificationAPI.fcmToken(502)
        try await Self.withServer(respond: { _ in .ok }) { apns in
            try await TwoNodeCluster.with(environment: credentials.environment(server: apns)) { cluster in
                let alice = try await cluster.register("alice")
                #expect(try await NotificationAPI.registerToken(iosToken, as: alice, on: cluster.node1).status == 200)
                #expect(try await NotificationAPI.registerToken(fcmToken, platform: "fcm", as: alice, on: cluster.node1).status == 200)
                let created = try await NotificationAPI.create(for: alice, title: "Hello", on: cluster.node2)
                let delivered = try await eventually(within: .seconds(20)) {
                    guard Self.requests(apns, for: iosToken).count == 1 else { return false }
                    return try await cluster.withRedis { redis in try await NotificationAPI.length(redis, NotificationAPI.outbox) == 0 }
                }
                #expect(delivered)
                let waiting = try await cluster.withRedis { redis in try await NotificationAPI.streamEntries(redis, NotificationAPI.fcmOutbox) }
                #expect(waiting.count == 1)
                #expect(waiting.first?.fields["token"] == fcmToken)
                #expect(waiting.first?.fields["platform"] == "fcm")
                #expect(waiting.first?.fields["notification"] == created.notification["id"].stringValue)
                let groups = try await cluster.withRedis { redis in try await redis.send("XINFO", "GROUPS", NotificationAPI.fcmOutbox) }
                #expect(groups == .array([]), "no worker reads the fcm outbox: \(groups)")
                #expect(apns.recordedRequests().count == 1)
            }
        }
    }
}
