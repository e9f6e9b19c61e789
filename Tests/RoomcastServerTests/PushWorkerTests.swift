import Foundation
import NIOCore
import RedisClient
import RoomcastTestSupport
import Synchronization
import Testing

/// The gateway's push worker against a local APNs stand-in (`LocalAPNsServer`): request shape,
/// exactly-once delivery across nodes, what 410, 500 and 400 answers do to tokens and jobs, and a
/// job left behind by a killed node (docs/clients/push.md).
@Suite("Push worker: APNs delivery from the outbox", .serialized)
struct PushWorkerTests {
    /// A fresh signing key in a temporary `.p8` file, and the settings that point nodes at a stub.
    struct Credentials {
        let key = APNsTestKey.generate()
        let keyPath: String
        let keyID = "KEY1234567"
        let teamID = "TEAM123456"
        let topic = "com.example.roomcast"

        init() throws {
            keyPath = FileManager.default.temporaryDirectory.appendingPathComponent("roomcast-apns-\(UUID().uuidString.prefix(8)).p8").path
            try key.pem.write(toFile: keyPath, atomically: true, encoding: .utf8)
        }

        func environment(server: LocalAPNsServer, requestTimeoutMilliseconds: Int = 2000) -> [String: String] {
            NotificationAPI.environment.merging([
                "ROOMCAST_APNS_KEY_PATH": keyPath,
                "ROOMCAST_APNS_KEY_ID": keyID,
                "ROOMCAST_APNS_TEAM_ID": teamID,
                "ROOMCAST_APNS_TOPIC": topic,
                "ROOMCAST_APNS_ENDPOINT": server.url,
                "ROOMCAST_APNS_REQUEST_TIMEOUT_MS": "\(requestTimeoutMilliseconds)",
                "ROOMCAST_PUSH_RETRY_DELAY_MS": "100",
                "ROOMCAST_PUSH_MAX_ATTEMPTS": "3",
                "ROOMCAST_PUSH_POLL_INTERVAL_MS": "50",
            ]) { $1 }
        }

        func remove() {
            try? FileManager.default.removeItem(atPath: keyPath)
        }
    }

    /// Runs `body` with a started stub, shutting it down whatever happens.
    static func withServer(
        respond: @escaping @Sendable (APNsRecordedRequest) async -> APNsStubResponse,
        _ body: (LocalAPNsServer) async throws -> Void
    ) async throws {
        let server = try await LocalAPNsServer.start(respond: respond)
        do {
            try await body(server)
        } catch {
            try? await server.shutdown()
            throw error
        }
        try await server.shutdown()
    }

    /// The device token a request was for (`/3/device/<token>`).
    static func token(of request: APNsRecordedRequest) -> String {
        request.path.hasPrefix("/3/device/") ? String(request.path.dropFirst("/3/device/".count)) : ""
    }

    static func requests(_ server: LocalAPNsServer, for token: String) -> [APNsRecordedRequest] {
        server.recordedRequests().filter { Self.token(of: $0) == token }
    }

    /// Checks what the worker sent for one job: the request line, the headers, the provider token
    /// and the body.
    static func expectRequest(
        _ request: APNsRecordedRequest, token: String, notification: String, badge: Int, credentials: Credentials,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        #expect(request.method == "POST", sourceLocation: sourceLocation)
        #expect(request.path == "/3/device/\(token)", sourceLocation: sourceLocation)
        #expect(request.headers["apns-topic"] == credentials.topic, sourceLocation: sourceLocation)
        #expect(request.headers["apns-push-type"] == "alert", sourceLocation: sourceLocation)
        #expect(request.headers["apns-priority"] == "10", sourceLocation: sourceLocation)
        #expect(request.headers["apns-collapse-id"] == notification, "\(request.headers)", sourceLocation: sourceLocation)
        #expect(request.headers["content-type"] == "application/json", sourceLocation: sourceLocation)
        let bearer = try #require(request.headers["authorization"], "\(request.headers)", sourceLocation: sourceLocation)
        let claims = try credentials.key.verify(bearer: bearer, keyID: credentials.keyID, teamID: credentials.teamID)
        #expect(claims.iss == credentials.teamID, sourceLocation: sourceLocation)
        let now = Int(Date().timeIntervalSince1970)
        #expect(abs(claims.iat - now) < 600, "iat \(claims.iat), now \(now)", sourceLocation: sourceLocation)
        let payload = try JSONValue(String(buffer: request.body))
        #expect(payload["aps"]["badge"].intValue == badge, "\(payload)", sourceLocation: sourceLocation)
        #expect(payload["aps"]["sound"] == "default", sourceLocation: sourceLocation)
        #expect(payload["notificationId"].stringValue == notification, "\(payload)", sourceLocation: sourceLocation)
    }

    @Test("each job goes to APNs exactly once across two nodes with the badge; 410 removes the token, 500 and no answer retry then dead-letter, 400 dead-letters at once")
    func deliveryAndFailures() async throws {
        let credentials = try Credentials()
        defer { credentials.remove() }
        let okTokens = [NotificationAPI.deviceToken(101), NotificationAPI.deviceToken(102)]
        let goneToken = NotificationAPI.deviceToken(103)
        let reregisteredToken = NotificationAPI.deviceToken(104)
        let failingToken = NotificationAPI.deviceToken(105)
        let badToken = NotificationAPI.deviceToken(106)
        let silentToken = NotificationAPI.deviceToken(107)
        let now = Int(Date().timeIntervalSince1970 * 1000)
        let answers: [String: APNsStubResponse] = [
            goneToken: .status(410, reason: "Unregistered", timestamp: now + 60_000),
            // Unregistered before the app registered it again: kept.
            reregisteredToken: .status(410, reason: "Unregistered", timestamp: 1_000),
            failingToken: .status(500, reason: "InternalServerError"),
            badToken: .status(400, reason: "BadDeviceToken"),
        ]
        let respond: @Sendable (APNsRecordedRequest) async -> APNsStubResponse = { request in
            // No answer at all: the worker's request times out.
            if Self.token(of: request) == silentToken { try? await Task.sleep(for: .seconds(120)) }
            return answers[Self.token(of: request)] ?? .ok
        }
        try await Self.withServer(respond: respond) { server in
            try await TwoNodeCluster.with(environment: credentials.environment(server: server)) { cluster in
                let alice = try await cluster.register("alice")
                let bob = try await cluster.register("bob")
                let carol = try await cluster.register("carol")
                let dave = try await cluster.register("dave")
                let erin = try await cluster.register("erin")
                let frank = try await cluster.register("frank")
                #expect(try await NotificationAPI.registerToken(okTokens[0], as: alice, on: cluster.node1).status == 200)
                #expect(try await NotificationAPI.registerToken(okTokens[1], as: alice, on: cluster.node2).status == 200)

                // Three notifications for Alice's two devices, on alternating nodes: six pushes.
                var badges: [String: Int] = [:]
                for index in 1...3 {
                    let created = try await NotificationAPI.create(
                        for: alice, title: "Comment \(index)", on: index.isMultiple(of: 2) ? cluster.node2 : cluster.node1
                    )
                    #expect(created.unreadCount == index)
                    badges[try #require(created.notification["id"].stringValue)] = created.unreadCount
                }
                let delivered = try await eventually(within: .seconds(30)) {
                    let sent = okTokens.map { Self.requests(server, for: $0).count }.reduce(0, +)
                    guard sent >= 6 else { return false }
                    return try await cluster.withRedis { redis in
                        let queued = try await NotificationAPI.length(redis, NotificationAPI.outbox)
                        let pending = try await NotificationAPI.pendingCount(redis)
                        return queued == 0 && pending == 0
                    }
                }
                #expect(delivered, "sent \(server.recordedRequests().map(\.path))")
                // Each delivery's latency, from its outbox entry, counted by the node that delivered it.
                #expect(try await eventually(within: .seconds(10)) {
                    var deliveries = 0.0
                    for node in [cluster.node1, cluster.node2] {
                        deliveries += try await MetricsEndpointTests.scrape(node).value("roomcast_push_delivery_latency_seconds_count") ?? 0
                    }
                    return deliveries == 6
                })
                // Once each: one request per (device, notification), with that notification's badge.
                for token in okTokens {
                    let sent = Self.requests(server, for: token)
                    let notifications = sent.compactMap { $0.headers["apns-collapse-id"] }
                    #expect(notifications.sorted() == badges.keys.sorted(), "requests for \(token): \(notifications)")
                    for request in sent {
                        let notification = request.headers["apns-collapse-id"] ?? ""
                        try Self.expectRequest(request, token: token, notification: notification, badge: badges[notification] ?? -1, credentials: credentials)
                    }
                }

                // The failure cases, all at once.
                #expect(try await NotificationAPI.registerToken(goneToken, as: bob, on: cluster.node1).status == 200)
                #expect(try await NotificationAPI.registerToken(reregisteredToken, as: carol, on: cluster.node2).status == 200)
                #expect(try await NotificationAPI.registerToken(failingToken, as: dave, on: cluster.node1).status == 200)
                #expect(try await NotificationAPI.registerToken(badToken, as: erin, on: cluster.node2).status == 200)
                #expect(try await NotificationAPI.registerToken(silentToken, as: frank, on: cluster.node1).status == 200)
                var notificationOf: [String: String] = [:]
                for (user, token) in [(bob, goneToken), (carol, reregisteredToken), (dave, failingToken), (erin, badToken), (frank, silentToken)] {
                    let created = try await NotificationAPI.create(for: user, title: "For \(user.username)", on: cluster.node2)
                    #expect(created.unreadCount == 1)
                    notificationOf[token] = created.notification["id"].stringValue
                }

                // 410: Bob's token is gone, the job finished after one request.
                let unregistered = try await eventually(within: .seconds(30)) {
                    try await NotificationAPI.tokens(of: bob, on: cluster.node1).isEmpty
                }
                #expect(unregistered, "Bob's token is still registered")
                let owner = try await cluster.withRedis { redis in try await redis.send("EXISTS", "push-token:{\(goneToken)}") }
                #expect(owner == .integer(0))

                // 500 or no answer three times (max_attempts), 400 once: then everything is finished,
                // with three dead letters.
                let settled = try await eventually(within: .seconds(30)) {
                    try await cluster.withRedis { redis in
                        let dead = try await NotificationAPI.length(redis, NotificationAPI.deadLetters)
                        let queued = try await NotificationAPI.length(redis, NotificationAPI.outbox)
                        let pending = try await NotificationAPI.pendingCount(redis)
                        return dead >= 3 && queued == 0 && pending == 0
                    }
                }
                #expect(settled, "requests: \(server.recordedRequests().map(\.path))")
                #expect(Self.requests(server, for: failingToken).count == 3)
                #expect(Self.requests(server, for: silentToken).count == 3)
                #expect(Self.requests(server, for: badToken).count == 1)
                #expect(Self.requests(server, for: goneToken).count == 1)
                #expect(Self.requests(server, for: reregisteredToken).count == 1)
                for token in [failingToken, badToken, goneToken, reregisteredToken, silentToken] {
                    for request in Self.requests(server, for: token) {
                        try Self.expectRequest(request, token: token, notification: notificationOf[token] ?? "", badge: 1, credentials: credentials)
                    }
                }
                // Re-registered after APNs said unregistered: Carol keeps her device.
                #expect(try await NotificationAPI.tokens(of: carol, on: cluster.node2) == [reregisteredToken])
                #expect(try await NotificationAPI.tokens(of: dave, on: cluster.node2) == [failingToken])

                let dead = try await cluster.withRedis { redis in try await NotificationAPI.streamEntries(redis, NotificationAPI.deadLetters) }
                #expect(dead.count == 3, "\(dead.map(\.fields))")
                let failed = try #require(dead.first { $0.fields["token"] == failingToken }, "\(dead.map(\.fields))")
                #expect(failed.fields["user"] == dave.id)
                #expect(failed.fields["notification"] == notificationOf[failingToken])
                #expect(failed.fields["attempts"] == "3", "\(failed.fields)")
                #expect(failed.fields["reason"]?.contains("500") == true, "\(failed.fields)")
                #expect(failed.fields["reason"]?.contains("3") == true, "\(failed.fields)")
                #expect(failed.fields["job"]?.isEmpty == false)
                #expect((try? JSONValue(failed.fields["payload"] ?? ""))?["aps"]["badge"] == 1)
                let refused = try #require(dead.first { $0.fields["token"] == badToken }, "\(dead.map(\.fields))")
                #expect(refused.fields["user"] == erin.id)
                #expect(refused.fields["attempts"] == "1", "\(refused.fields)")
                #expect(refused.fields["reason"] == "refused by APNs: status 400 BadDeviceToken", "\(refused.fields)")
                let unanswered = try #require(dead.first { $0.fields["token"] == silentToken }, "\(dead.map(\.fields))")
                #expect(unanswered.fields["user"] == frank.id)
                #expect(unanswered.fields["attempts"] == "3", "\(unanswered.fields)")
                #expect(unanswered.fields["reason"]?.isEmpty == false, "\(unanswered.fields)")
                #expect(try await NotificationAPI.tokens(of: frank, on: cluster.node1) == [silentToken])

                // Alice's jobs were never sent again.
                #expect(okTokens.map { Self.requests(server, for: $0).count } == [3, 3])
                let expectedTotal = 6 + 3 + 3 + 1 + 1 + 1
                #expect(server.recordedRequests().count == expectedTotal)
            }
        }
    }

    @Test("a job whose node was killed mid-send is claimed and delivered by another node")
    func jobOfKilledWorker() async throws {
        let credentials = try Credentials()
        defer { credentials.remove() }
        let token = NotificationAPI.deviceToken(201)
        let answered = Mutex(0)
        // The first request hangs (the node dies waiting); later ones succeed.
        let respond: @Sendable (APNsRecordedRequest) async -> APNsStubResponse = { _ in
            let isFirst = answered.withLock { count in
                count += 1
                return count == 1
            }
            if isFirst { try? await Task.sleep(for: .seconds(120)) }
            return .ok
        }
        try await Self.withServer(respond: respond) { server in
            try await TestRedis.with { redis in
                let environment = credentials.environment(server: server, requestTimeoutMilliseconds: 2000)
                let arguments = ["--redis-url", redis.url, "--log-level", "warning"]
                let first = try await GatewayProcess(arguments: arguments, environment: environment)
                let survivor: GatewayProcess
                do {
                    let user = try await TwoNodeCluster.register("alice", on: first)
                    #expect(try await NotificationAPI.registerToken(token, as: user, on: first).status == 200)
                    let created = try await NotificationAPI.create(for: user, title: "Hello", on: first)
                    let notification = try #require(created.notification["id"].stringValue)

                    // The node has the job in flight: the stub holds the request, the group lists it as the node's.
                    #expect(try await eventually(within: .seconds(30)) { !server.recordedRequests().isEmpty })
                    let pending = try await withClient(try redis.configuration()) { client in
                        try await client.send("XPENDING", NotificationAPI.outbox, "push-workers", "-", "+", 10)
                    }
                    guard case .array(let entries) = pending, entries.count == 1, case .array(let entry) = entries[0] else {
                        throw TestFailure("expected one pending job, got \(pending)")
                    }
                    #expect(entry[1].string?.hasSuffix("-\(first.process.pid)") == true, "consumer \(entry)")
                    first.process.signal(SIGKILL)
                    #expect(await first.process.exitStatus(timeout: .seconds(30)) == 128 + SIGKILL)
                    try? FileManager.default.removeItem(atPath: first.logPath)

                    survivor = try await GatewayProcess(arguments: arguments, environment: environment)
                    do {
                        let delivered = try await eventually(within: .seconds(30)) {
                            guard server.recordedRequests().count >= 2 else { return false }
                            return try await withClient(try redis.configuration()) { client in
                                let queued = try await NotificationAPI.length(client, NotificationAPI.outbox)
                                let pending = try await NotificationAPI.pendingCount(client)
                                return queued == 0 && pending == 0
                            }
                        }
                        #expect(delivered, "requests \(server.recordedRequests().count); survivor log:\n\(survivor.output)")
                        let requests = server.recordedRequests()
                        #expect(requests.count == 2)
                        for request in requests {
                            try Self.expectRequest(request, token: token, notification: notification, badge: 1, credentials: credentials)
                        }
                        let dead = try await withClient(try redis.configuration()) { client in
                            try await NotificationAPI.length(client, NotificationAPI.deadLetters)
                        }
                        #expect(dead == 0)
                    } catch {
                        await survivor.process.terminate()
                        throw error
                    }
                } catch {
                    if first.process.isRunning { first.process.signal(SIGKILL) }
                    throw error
                }
                await survivor.stop()
            }
        }
    }
}
