import Foundation
import RedisClient
import RoomcastTestSupport
import Testing

/// Notifications, badges, push tokens, the internal service endpoint and the push outbox over
/// REST on two nodes sharing one Redis (docs/clients/push.md, docs/clients/rest.md), seen from outside.
@Suite("Notifications over REST: badges, the service endpoint, push tokens and the outbox", .serialized)
struct NotificationRouteTests {
    static let notificationKeys: Set<String> = ["id", "type", "title", "body", "read", "createdAt"]

    static func ids(_ notifications: [JSONValue]) -> [String] {
        notifications.compactMap { $0["id"].stringValue }
    }

    // MARK: Badge and list

    @Test("the badge drops by exactly one under many concurrent reads of one id on both nodes; the list pages newest first with read flags")
    func exactBadgeUnderConcurrentReads() async throws {
        var environment = NotificationAPI.environment
        environment["ROOMCAST_NOTIFICATIONS_KEPT_PER_USER"] = "6"
        try await TwoNodeCluster.with(environment: environment) { cluster in
            let alice = try await cluster.register("alice")
            let bob = try await cluster.register("bob", on: cluster.node2)

            // Five notifications, created on alternating nodes: the count climbs one by one.
            var created: [JSONValue] = []
            for index in 1...5 {
                let node = index.isMultiple(of: 2) ? cluster.node2 : cluster.node1
                let (notification, unread) = try await NotificationAPI.create(
                    for: alice, title: "Comment \(index)", text: "body \(index)", actor: bob, data: ["commentId": "c\(index)"], on: node
                )
                #expect(unread == index)
                #expect(notification.memberNames == Self.notificationKeys.union(["actor", "data"]), "\(notification)")
                #expect(notification["read"] == false)
                #expect(notification["title"].stringValue == "Comment \(index)")
                #expect(notification["body"].stringValue == "body \(index)")
                #expect(notification["actor"]["id"].stringValue == bob.id)
                #expect(notification["actor"]["username"] == "bob")
                #expect(notification["data"] == ["commentId": .string("c\(index)")])
                created.append(notification)
            }
            let ids = Self.ids(created)
            #expect(Set(ids).count == 5)

            // The list is what the creates returned, newest first, on either node.
            for node in [cluster.node1, cluster.node2] {
                let all = try await NotificationAPI.list(alice, on: node)
                #expect(all.notifications == Array(created.reversed()))
                #expect(all.nextCursor == nil)
            }
            #expect(try await NotificationAPI.list(bob, on: cluster.node1).notifications.isEmpty)

            // 24 reads of the same id at once, half on each node: every answer says 4.
            let target = ids[2]
            let requests = (0..<24).map { index in
                (port: index.isMultiple(of: 2) ? cluster.node1.port : cluster.node2.port, method: "POST",
                 path: "/api/notifications/\(target)/read", token: alice.token)
            }
            let outcomes = try await ConcurrentHTTP.send(requests)
            for outcome in outcomes {
                #expect(outcome.status == 200, "\(outcome.body)")
                #expect(try JSONValue(outcome.body) == ["data": ["unreadCount": 4]])
            }
            #expect(try await NotificationAPI.unreadCount(alice, on: cluster.node1) == 4)
            #expect(try await NotificationAPI.unreadCount(alice, on: cluster.node2) == 4)
            let unreadSet = try await cluster.withRedis { redis in try await redis.send("SCARD", "user:{\(alice.id)}:notifications:unread") }
            #expect(unreadSet == .integer(4))
            let listed = try await NotificationAPI.list(alice, on: cluster.node2).notifications
            #expect(Self.ids(listed) == ids.reversed())
            #expect(listed.map { $0["read"] } == ids.reversed().map { JSONValue.bool($0 == target) })

            // Reading another once, then again: 3 both times.
            let second = try await NotificationAPI.read(ids[0], as: alice, on: cluster.node1)
            #expect(second.status == 200)
            #expect(second.json == ["data": ["unreadCount": 3]])
            #expect(try await NotificationAPI.read(ids[0], as: alice, on: cluster.node2).json == ["data": ["unreadCount": 3]])

            // Unknown ids, malformed ids and someone else's: 404, nothing changes.
            for id in ["0123456789abcdef0123456789abcdef", "no.such.id"] {
                let missing = try await NotificationAPI.read(id, as: alice, on: cluster.node1)
                #expect(missing.status == 404, "\(id): \(missing.json)")
                #expect(missing.json["error"]["code"] == "not_found")
            }
            let foreign = try await NotificationAPI.read(ids[4], as: bob, on: cluster.node2)
            #expect(foreign.status == 404, "\(foreign.json)")
            #expect(foreign.json["error"]["code"] == "not_found")
            #expect(try await NotificationAPI.unreadCount(alice, on: cluster.node1) == 3)
            #expect(try await NotificationAPI.unreadCount(bob, on: cluster.node1) == 0)

            // Pages of two, newest first, following nextCursor across nodes; read flags kept.
            var paged: [JSONValue] = []
            var cursor: String?
            var pages = 0
            repeat {
                let query = "?limit=2" + (cursor.map { "&cursor=\($0)" } ?? "")
                let page = try await NotificationAPI.list(alice, query: query, on: pages.isMultiple(of: 2) ? cluster.node1 : cluster.node2)
                #expect(page.notifications.count == (pages < 2 ? 2 : 1))
                paged += page.notifications
                cursor = page.nextCursor
                pages += 1
            } while cursor != nil && pages < 5
            #expect(pages == 3)
            #expect(Self.ids(paged) == ids.reversed())
            #expect(paged.map { $0["read"] } == ids.reversed().map { JSONValue.bool($0 == target || $0 == ids[0]) })

            // Bad paging parameters: 400 invalid_payload.
            for query in ["?cursor=abc", "?cursor=-1", "?cursor=0", "?limit=0", "?limit=101", "?limit=two"] {
                let refused = try await ElementSocketTests.rest("GET", "/api/notifications" + query, as: alice, on: cluster.node2)
                #expect(refused.status == 400, "\(query): \(refused.json)")
                #expect(refused.json["error"]["code"] == "invalid_payload", "\(query)")
            }

            // Only the newest six are kept: two more push the oldest (read) one out, and
            // reading it is then a 404.
            let sixth = try await NotificationAPI.create(for: alice, title: "Comment 6", on: cluster.node2)
            #expect(sixth.unreadCount == 4)
            let seventh = try await NotificationAPI.create(for: alice, title: "Comment 7", on: cluster.node1)
            #expect(seventh.unreadCount == 5)
            let kept = try await NotificationAPI.list(alice, on: cluster.node1).notifications
            #expect(Self.ids(kept) == Self.ids([seventh.notification, sixth.notification]) + ids.dropFirst().reversed())
            #expect(try await NotificationAPI.read(ids[0], as: alice, on: cluster.node2).status == 404)
            #expect(try await NotificationAPI.unreadCount(alice, on: cluster.node2) == 5)

            // Everything needs a user token.
            let anonymous: [(String, String, String?)] = [
                ("GET", "/api/notifications", nil), ("GET", "/api/notifications/unread-count", nil),
                ("POST", "/api/notifications/\(target)/read", nil), ("POST", "/api/notifications/read-all", nil),
                ("PUT", "/api/users/me/push-token", #"{"token":"\#(NotificationAPI.deviceToken(1))","platform":"ios"}"#),
                ("GET", "/api/users/me/push-tokens", nil), ("DELETE", "/api/users/me/push-token/\(NotificationAPI.deviceToken(1))", nil),
            ]
            for (method, path, body) in anonymous {
                let refused = try await ElementSocketTests.rest(method, path, as: nil, body: body, on: cluster.node1)
                #expect(refused.status == 401, "\(method) \(path): \(refused.json)")
                #expect(refused.json["error"]["code"] == "unauthorized", "\(method) \(path)")
                let forged = try await HTTPTestClient.request(method, port: cluster.node2.port, path: path, headers: ["Authorization": "Bearer nonsense"])
                #expect(forged.status == 401, "\(method) \(path) with a bad token: \(forged.text)")
            }
            #expect(try await NotificationAPI.unreadCount(alice, on: cluster.node2) == 5)
        }
    }

    // MARK: Internal endpoint

    @Test("the internal endpoint: off without a key, 401 for a wrong key, 201 with a valid one, 404 unknown users, 400 invalid, repeated ids")
    func internalEndpoint() async throws {
        try await TwoNodeCluster.with(environment: NotificationAPI.environment) { cluster in
            let alice = try await cluster.register("alice")
            let bob = try await cluster.register("bob")
            let valid = NotificationAPI.body(for: alice).description

            // A node without a service key has no such endpoint, key or not.
            let keyless = try await GatewayProcess(arguments: ["--redis-url", cluster.redis.url, "--log-level", "warning"])
            for key in [NotificationAPI.serviceKey, nil] {
                let off = try await NotificationAPI.raw(valid, key: key, on: keyless)
                #expect(off.status == 404, "\(off.json)")
                #expect(off.json["error"]["code"] == "not_found")
            }
            await keyless.stop()

            // Missing or wrong keys: 401, on both nodes.
            for key in [nil, "", "wrong-service-key-0123456789", NotificationAPI.serviceKey + "x", String(NotificationAPI.serviceKey.dropLast())] {
                for node in [cluster.node1, cluster.node2] {
                    let refused = try await NotificationAPI.raw(valid, key: key, on: node)
                    #expect(refused.status == 401, "key \(key ?? "none"): \(refused.json)")
                    #expect(refused.json["error"]["code"] == "unauthorized")
                }
            }
            // A user's token is no service key.
            let withUserToken = try await HTTPTestClient.request(
                "POST", port: cluster.node1.port, path: "/api/internal/notifications",
                headers: ["Content-Type": "application/json", "Authorization": "Bearer \(alice.token)"], body: Data(valid.utf8)
            )
            #expect(withUserToken.status == 401, "\(withUserToken.text)")
            #expect(try await NotificationAPI.unreadCount(alice, on: cluster.node1) == 0)

            // Every field: 201 {notification, unreadCount}.
            let full = try await NotificationAPI.raw(
                NotificationAPI.body(
                    for: alice, type: "comment.reply", title: "Bob replied", text: "Nice one", actor: bob,
                    roomId: "room123", elementId: "element456", data: ["commentId": "c1", "threadId": "t9"]
                ).description,
                on: cluster.node2
            )
            #expect(full.status == 201, "\(full.json)")
            #expect(full.json.memberNames == ["data"])
            #expect(full.json["data"].memberNames == ["notification", "unreadCount"])
            #expect(full.json["data"]["unreadCount"] == 1)
            let notification = full.json["data"]["notification"]
            #expect(notification.memberNames == Self.notificationKeys.union(["roomId", "elementId", "actor", "data"]), "\(notification)")
            #expect(notification["type"] == "comment.reply")
            #expect(notification["title"] == "Bob replied")
            #expect(notification["body"] == "Nice one")
            #expect(notification["roomId"] == "room123")
            #expect(notification["elementId"] == "element456")
            #expect(notification["actor"]["id"].stringValue == bob.id)
            #expect(notification["data"] == ["commentId": "c1", "threadId": "t9"])
            #expect(notification["read"] == false)
            #expect(notification["createdAt"].stringValue?.wholeMatch(of: /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/) != nil, "\(notification)")
            #expect(try await NotificationAPI.list(alice, on: cluster.node1).notifications == [notification])

            // The least: userId, type, title; no optional member appears, the body is empty.
            let minimal = try await NotificationAPI.create(for: alice, on: cluster.node1)
            #expect(minimal.unreadCount == 2)
            #expect(minimal.notification.memberNames == Self.notificationKeys, "\(minimal.notification)")
            #expect(minimal.notification["body"] == "")
            // Limits are inclusive: a 200-character title and a 1000-character body pass.
            let longest = try await NotificationAPI.create(
                for: alice, title: String(repeating: "t", count: 200), text: String(repeating: "b", count: 1000), on: cluster.node2
            )
            #expect(longest.unreadCount == 3)

            // Unknown user or actor: 404.
            let unknownUser = try await NotificationAPI.raw(
                #"{"userId":"0123456789abcdef0123456789abcdef","type":"comment","title":"hi"}"#, on: cluster.node1
            )
            #expect(unknownUser.status == 404, "\(unknownUser.json)")
            #expect(unknownUser.json["error"]["code"] == "not_found")
            let unknownActor = try await NotificationAPI.raw(
                #"{"userId":"\#(alice.id)","actorId":"0123456789abcdef0123456789abcdef","type":"comment","title":"hi"}"#, on: cluster.node2
            )
            #expect(unknownActor.status == 404, "\(unknownActor.json)")
            #expect(unknownActor.json["error"]["code"] == "not_found")

            // Invalid bodies: 400 invalid_payload, nothing stored.
            let user = "\"userId\":\"\(alice.id)\""
            let manyFields = (1...17).map { "\"k\($0)\":\"v\"" }.joined(separator: ",")
            let bigFields = (1...16).map { "\"k\($0)\":\"\(String(repeating: "v", count: 240))\"" }.joined(separator: ",")
            let invalid = [
                #"{\#(user),"type":"Bad Type","title":"hi"}"#,
                #"{\#(user),"type":"","title":"hi"}"#,
                #"{\#(user),"type":"\#(String(repeating: "a", count: 65))","title":"hi"}"#,
                #"{\#(user),"type":"comment","title":""}"#,
                #"{\#(user),"type":"comment","title":"\#(String(repeating: "t", count: 201))"}"#,
                #"{\#(user),"type":"comment","title":"hi","body":"\#(String(repeating: "b", count: 1001))"}"#,
                #"{\#(user),"type":"comment","title":"hi","data":{"aps":"x"}}"#,
                #"{\#(user),"type":"comment","title":"hi","data":{"notificationId":"x"}}"#,
                #"{\#(user),"type":"comment","title":"hi","data":{\#(manyFields)}}"#,
                #"{\#(user),"type":"comment","title":"hi","data":{"count":1}}"#,
                #"{\#(user),"type":"comment","title":"\#(String(repeating: "t", count: 200))","body":"\#(String(repeating: "b", count: 1000))","data":{\#(bigFields)}}"#,
                #"{\#(user),"title":"hi"}"#,
                #"{\#(user),"type":"comment"}"#,
                #"{"type":"comment","title":"hi"}"#,
                #"{"userId":"not a valid id!","type":"comment","title":"hi"}"#,
                #"{\#(user),"type":"comment","title":"hi","id":"bad id"}"#,
                #"{\#(user),"type":"comment""#,
            ]
            for body in invalid {
                let refused = try await NotificationAPI.raw(body, on: cluster.node1)
                #expect(refused.status == 400, "\(body.prefix(120)): \(refused.json)")
                #expect(refused.json["error"]["code"] == "invalid_payload", "\(body.prefix(120))")
            }
            #expect(try await NotificationAPI.unreadCount(alice, on: cluster.node2) == 3)
            #expect(try await NotificationAPI.list(alice, on: cluster.node2).notifications.count == 3)

            // A repeated id raises the same notification again: back on top, unread, no second entry.
            let first = try await NotificationAPI.create(for: alice, title: "Follow 1", id: "svc-follow-1", on: cluster.node1)
            #expect(first.unreadCount == 4)
            #expect(first.notification["id"] == "svc-follow-1")
            let other = try await NotificationAPI.create(for: alice, title: "Other", on: cluster.node2)
            #expect(other.unreadCount == 5)
            #expect(try await NotificationAPI.read("svc-follow-1", as: alice, on: cluster.node2).json == ["data": ["unreadCount": 4]])
            let again = try await NotificationAPI.create(for: alice, title: "Follow 1 again", id: "svc-follow-1", on: cluster.node2)
            #expect(again.unreadCount == 5)
            #expect(again.notification["id"] == "svc-follow-1")
            let repeated = try await NotificationAPI.create(for: alice, title: "Follow 1 again", id: "svc-follow-1", on: cluster.node1)
            #expect(repeated.unreadCount == 5)
            let listed = try await NotificationAPI.list(alice, on: cluster.node1).notifications
            #expect(listed.count == 5)
            #expect(Self.ids(listed).filter { $0 == "svc-follow-1" }.count == 1)
            #expect(listed.first?["id"] == "svc-follow-1")
            #expect(listed.first?["read"] == false)
            #expect(listed.first?["title"] == "Follow 1 again")
            #expect(listed.dropFirst().first?["id"] == other.notification["id"])
            // The same id for another user is that user's own notification.
            let bobs = try await NotificationAPI.create(for: bob, id: "svc-follow-1", on: cluster.node2)
            #expect(bobs.unreadCount == 1)
            #expect(try await NotificationAPI.unreadCount(alice, on: cluster.node2) == 5)
        }
    }

    // MARK: Push tokens

    @Test("fcm push tokens: accepted with their case kept, bounded in bytes, listed with their platform, removed by their exact text")
    func fcmPushTokens() async throws {
        try await TwoNodeCluster.with { cluster in
            let alice = try await cluster.register("alice")
            let token = NotificationAPI.fcmToken(1)
            let registered = try await NotificationAPI.registerToken(token, platform: "FCM", as: alice, on: cluster.node1)
            #expect(registered.status == 200, "\(registered.json)")
            #expect(registered.json == ["data": ["token": .string(token), "platform": "fcm"]])
            let longest = String(repeating: "A", count: 1023) + ":"
            #expect(try await NotificationAPI.registerToken(longest, platform: "fcm", as: alice, on: cluster.node2).status == 200)
            #expect(try await NotificationAPI.tokens(of: alice, platform: "fcm", on: cluster.node1).sorted() == [token, longest].sorted())
            let invalid: [(String, String)] = [
                (String(repeating: "A", count: 1024) + ":", "1025 bytes"),
                (String(repeating: "a", count: 15), "15 bytes"),
                ("dXbcF1:APA91b with a space", "a space"),
                ("dXbcF1:APA91b/slash/in/it", "a slash"),
                ("dXbcF1:APA91b{tag}", "braces"),
                ("dXbcF1:APA91bé", "non-ASCII"),
            ]
            for (bad, label) in invalid {
                let refused = try await NotificationAPI.registerToken(bad, platform: "fcm", as: alice, on: cluster.node1)
                #expect(refused.status == 400, "\(label): \(refused.json)")
                #expect(refused.json["error"]["code"] == "invalid_payload", "\(label)")
            }
            // FCM tokens are case-sensitive: another case is another token.
            let otherCase = try await ElementSocketTests.rest("DELETE", "/api/users/me/push-token/\(token.uppercased())", as: alice, on: cluster.node2)
            #expect(otherCase.status == 404, "\(otherCase.json)")
            let removed = try await ElementSocketTests.rest("DELETE", "/api/users/me/push-token/\(token)", as: alice, on: cluster.node2)
            #expect(removed.status == 200, "\(removed.json)")
            #expect(removed.json == ["data": ["token": .string(token), "removed": true]])
            #expect(try await NotificationAPI.tokens(of: alice, platform: "fcm", on: cluster.node1) == [longest])
        }
    }

    @Test("push tokens: validated, listed, removed once, and moved to whoever registers them last")
    func pushTokens() async throws {
        try await TwoNodeCluster.with { cluster in
            let alice = try await cluster.register("alice")
            let bob = try await cluster.register("bob")
            let first = NotificationAPI.deviceToken(1)
            let second = NotificationAPI.deviceToken(2)

            // Registering normalises case: tokens and platform are stored lowercase.
            let registered = try await NotificationAPI.registerToken(first.uppercased(), platform: "iOS", as: alice, on: cluster.node1)
            #expect(registered.status == 200, "\(registered.json)")
            #expect(registered.json == ["data": ["token": .string(first), "platform": "ios"]])
            #expect(try await NotificationAPI.registerToken(second, as: alice, on: cluster.node2).status == 200)
            // Registering again refreshes, it does not duplicate.
            #expect(try await NotificationAPI.registerToken(first, as: alice, on: cluster.node2).status == 200)
            #expect(try await NotificationAPI.tokens(of: alice, on: cluster.node1).sorted() == [first, second].sorted())
            #expect(try await NotificationAPI.tokens(of: bob, on: cluster.node2).isEmpty)

            // Lengths 16 and 512 pass; anything else is refused with 400.
            let shortest = String(repeating: "ab", count: 8)
            let longest = String(repeating: "cd", count: 256)
            #expect(try await NotificationAPI.registerToken(shortest, as: bob, on: cluster.node1).status == 200)
            #expect(try await NotificationAPI.registerToken(longest, as: bob, on: cluster.node2).status == 200)
            let invalid: [(String, String)] = [
                (#"{"token":"\#(String(repeating: "zz", count: 32))","platform":"ios"}"#, "non-hex"),
                (#"{"token":"\#(String(repeating: "a", count: 15))","platform":"ios"}"#, "15 digits"),
                (#"{"token":"\#(String(repeating: "a", count: 513))","platform":"ios"}"#, "513 digits"),
                (#"{"token":"\#(String(repeating: "a", count: 64))","platform":"android"}"#, "android"),
                (#"{"token":"\#(String(repeating: "a", count: 64))","platform":""}"#, "empty platform"),
                (#"{"token":"\#(String(repeating: "a", count: 64))"}"#, "no platform"),
                (#"{"platform":"ios"}"#, "no token"),
                (#"{"token":12345678901234567890,"platform":"ios"}"#, "a number"),
                (#"{"token":"\#(String(repeating: "a", count: 32)) ","platform":"ios"}"#, "trailing space"),
            ]
            for (body, label) in invalid {
                let refused = try await ElementSocketTests.rest("PUT", "/api/users/me/push-token", as: bob, body: body, on: cluster.node1)
                #expect(refused.status == 400, "\(label): \(refused.json)")
                #expect(refused.json["error"]["code"] == "invalid_payload", "\(label)")
            }
            #expect(try await NotificationAPI.tokens(of: bob, on: cluster.node1).sorted() == [shortest, longest].sorted())

            // DELETE removes it (any case), once.
            let removed = try await ElementSocketTests.rest("DELETE", "/api/users/me/push-token/\(second.uppercased())", as: alice, on: cluster.node2)
            #expect(removed.status == 200, "\(removed.json)")
            #expect(removed.json == ["data": ["token": .string(second), "removed": true]])
            let again = try await ElementSocketTests.rest("DELETE", "/api/users/me/push-token/\(second)", as: alice, on: cluster.node1)
            #expect(again.status == 404, "\(again.json)")
            #expect(again.json["error"]["code"] == "not_found")
            #expect(try await NotificationAPI.tokens(of: alice, on: cluster.node1) == [first])
            let ownerAfterDelete = try await cluster.withRedis { redis in try await redis.send("EXISTS", "push-token:{\(second)}") }
            #expect(ownerAfterDelete == .integer(0))

            // Bob signs in on Alice's device: the token moves to him.
            #expect(try await NotificationAPI.registerToken(first, as: bob, on: cluster.node2).status == 200)
            #expect(try await NotificationAPI.tokens(of: alice, on: cluster.node1).isEmpty)
            #expect(try await NotificationAPI.tokens(of: bob, on: cluster.node1).sorted() == [first, shortest, longest].sorted())
            let owner = try await cluster.withRedis { redis in try await redis.send("GET", "push-token:{\(first)}") }
            #expect(owner.string == bob.id)
            // Alice can no longer remove it: it is not hers, and Bob keeps it.
            let notHers = try await ElementSocketTests.rest("DELETE", "/api/users/me/push-token/\(first)", as: alice, on: cluster.node2)
            #expect(notHers.status == 404, "\(notHers.json)")
            #expect(try await NotificationAPI.tokens(of: bob, on: cluster.node2).contains(first))
            let ownerAfter = try await cluster.withRedis { redis in try await redis.send("GET", "push-token:{\(first)}") }
            #expect(ownerAfter.string == bob.id)
        }
    }

    // MARK: Outbox

    @Test("a token registered with installationId moves only through that installation: 409 conflict for anyone else, 400 for a bad id")
    func pushTokensBoundToTheirInstallation() async throws {
        try await TwoNodeCluster.with { cluster in
            let alice = try await cluster.register("alice")
            let mallory = try await cluster.register("mallory")
            let token = NotificationAPI.deviceToken(3)
            let register = { (user: TestUser, installation: String?, node: GatewayProcess) async throws -> ElementSocketTests.Response in
                var body: JSONValue = ["token": .string(token), "platform": "ios"]
                if let installation { body = ["token": .string(token), "platform": "ios", "installationId": .string(installation)] }
                return try await ElementSocketTests.rest("PUT", "/api/users/me/push-token", as: user, body: body.description, on: node)
            }
            let phone = "5F0C8A3E-1D2B-4C6F-8E9A-0B1C2D3E4F50"
            let registered = try await register(alice, phone, cluster.node1)
            #expect(registered.status == 200, "\(registered.json)")
            #expect(registered.json == ["data": ["token": .string(token), "platform": "ios"]])

            for installation in [nil, "mallorys-own-installation"] {
                let refused = try await register(mallory, installation, cluster.node2)
                #expect(refused.status == 409, "\(refused.json)")
                #expect(refused.json["error"]["code"] == "conflict")
            }
            #expect(try await NotificationAPI.tokens(of: alice, on: cluster.node2) == [token])
            #expect(try await NotificationAPI.tokens(of: mallory, on: cluster.node1).isEmpty)

            let badID = try await register(mallory, "short", cluster.node1)
            #expect(badID.status == 400, "\(badID.json)")
            #expect(badID.json["error"]["code"] == "invalid_payload")

            // The same phone signed in as someone else moves it.
            let moved = try await register(mallory, phone, cluster.node2)
            #expect(moved.status == 200, "\(moved.json)")
            #expect(try await NotificationAPI.tokens(of: alice, on: cluster.node1).isEmpty)
            #expect(try await NotificationAPI.tokens(of: mallory, on: cluster.node1) == [token])
        }
    }

    @Test("without APNs settings push jobs wait in the outbox: one per device, aps.badge = the unread count at enqueue")
    func outboxWithoutAPNs() async throws {
        try await TwoNodeCluster.with(environment: NotificationAPI.environment) { cluster in
            let alice = try await cluster.register("alice")
            let bob = try await cluster.register("bob")
            let tokens = [NotificationAPI.deviceToken(11), NotificationAPI.deviceToken(12), NotificationAPI.deviceToken(13)]
            #expect(try await NotificationAPI.registerToken(tokens[0], as: alice, on: cluster.node1).status == 200)
            #expect(try await NotificationAPI.registerToken(tokens[1], as: alice, on: cluster.node2).status == 200)
            // Bob's device moves to Alice: Bob has none left.
            #expect(try await NotificationAPI.registerToken(tokens[2], as: bob, on: cluster.node1).status == 200)
            #expect(try await NotificationAPI.registerToken(tokens[2], as: alice, on: cluster.node2).status == 200)

            // Three notifications, one read, a fourth: badges 1, 2, 3, then 3 again (2 unread + 1).
            var expected: [String: (badge: Int, title: String, body: String, data: String)] = [:]
            for index in 1...3 {
                let created = try await NotificationAPI.create(
                    for: alice, title: "Comment \(index)", text: "body \(index)", actor: bob, data: ["commentId": "c\(index)"],
                    on: index.isMultiple(of: 2) ? cluster.node2 : cluster.node1
                )
                #expect(created.unreadCount == index)
                expected[try #require(created.notification["id"].stringValue)] = (created.unreadCount, "Comment \(index)", "body \(index)", "c\(index)")
            }
            let firstID = try #require(expected.first { $0.value.badge == 1 }?.key)
            #expect(try await NotificationAPI.read(firstID, as: alice, on: cluster.node2).json == ["data": ["unreadCount": 2]])
            let fourth = try await NotificationAPI.create(
                for: alice, title: "Comment 4", text: "body 4", actor: bob, data: ["commentId": "c4"], on: cluster.node2
            )
            #expect(fourth.unreadCount == 3)
            expected[try #require(fourth.notification["id"].stringValue)] = (3, "Comment 4", "body 4", "c4")
            // Bob has no device: his notification enqueues nothing.
            #expect(try await NotificationAPI.create(for: bob, actor: alice, on: cluster.node1).unreadCount == 1)

            let (jobs, groups) = try await cluster.withRedis { redis in
                (try await NotificationAPI.streamEntries(redis, NotificationAPI.outbox), try await redis.send("XINFO", "GROUPS", NotificationAPI.outbox))
            }
            // No worker ran: no consumer group was ever created.
            #expect(groups == .array([]), "\(groups)")
            #expect(jobs.count == 12, "\(jobs.map(\.fields))")
            for job in jobs {
                #expect(Set(job.fields.keys) == ["user", "token", "notification", "platform", "payload"], "\(job.fields)")
                #expect(job.fields["user"] == alice.id)
                #expect(job.fields["platform"] == "ios")
            }
            let byNotification = Dictionary(grouping: jobs) { $0.fields["notification"] ?? "" }
            #expect(Set(byNotification.keys) == Set(expected.keys))
            for (id, want) in expected {
                let forIt = byNotification[id] ?? []
                #expect(forIt.compactMap { $0.fields["token"] }.sorted() == tokens.sorted(), "jobs of \(id)")
                for job in forIt {
                    let payload = try JSONValue(job.fields["payload"] ?? "")
                    #expect(payload.memberNames == ["aps", "type", "notificationId", "actorId", "commentId"], "\(payload)")
                    #expect(payload["aps"] == ["alert": ["title": .string(want.title), "body": .string(want.body)], "sound": "default", "badge": .number(Double(want.badge))], "\(payload)")
                    #expect(payload["type"] == "comment")
                    #expect(payload["notificationId"].stringValue == id)
                    #expect(payload["actorId"].stringValue == bob.id)
                    #expect(payload["commentId"].stringValue == want.data)
                }
            }
            // A push needs no more than APNs allows.
            #expect(jobs.allSatisfy { ($0.fields["payload"]?.utf8.count ?? 0) <= 4096 })
        }
    }
}
