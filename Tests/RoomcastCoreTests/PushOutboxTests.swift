import Foundation
import NIOCore
import RedisClient
import RoomcastCore
import RoomcastTestSupport
import Testing

/// The push jobs `NotificationStore.create` enqueues: one per device, the badge spliced in.
@Suite("Notification push jobs against a real redis-server")
struct NotificationPushJobTests {
    @Test("with 2 devices, 3 creates enqueue 6 jobs; each payload's aps.badge is the unread count at that create")
    func jobsPerDevice() async throws {
        try await withTestRedis { redis, _ in
            let users = try await LiveFixture.users(redis, 2, prefix: "jobs")
            let alice = users[0]
            let bob = users[1]
            let tokens = PushTokenStore(redis: redis)
            let devices = try [1, 2].map { try PushToken(token: NotificationFixture.token($0), platform: "ios") }
            for device in devices { try await tokens.register(device, for: alice.id) }
            try await tokens.register(try PushToken(token: NotificationFixture.token(3), platform: "ios"), for: bob.id)
            let store = NotificationStore(redis: redis)

            let room = RoomID.random()
            let element = ElementID.random()
            let first = try await store.create(
                NotificationDraft(
                    type: "element_reaction", title: "bob hearted your note", body: "In Trip", roomId: room, elementId: element, actor: bob,
                    data: ["orderId": "42", "deepLink": "roomcast://rooms/1"]
                ),
                for: alice.id
            )
            let second = try await store.create(NotificationDraft(type: "plain", title: "Plain", body: ""), for: alice.id)
            _ = try await store.markRead(first.notification.id, for: alice.id)
            let third = try await store.create(NotificationDraft(type: "room_created", title: "New room", body: "Trip", roomId: room), for: alice.id)
            let counts: [Int] = [first.unreadCount, second.unreadCount, third.unreadCount]
            #expect(counts == [1, 2, 2])

            let jobs = try await NotificationFixture.stream(redis, RedisKeys.pushOutbox)
            #expect(jobs.count == 6)
            #expect(jobs.allSatisfy { Set($0.fields.keys) == ["user", "token", "platform", "notification", "payload"] })
            #expect(jobs.allSatisfy { $0.fields["user"] == alice.id.rawValue })
            // In create order, one job per device each.
            let created = [first, second, third]
            #expect(jobs.map { $0.fields["notification"] ?? "" } == created.flatMap { [$0.notification.id.rawValue, $0.notification.id.rawValue] })
            for (index, result) in created.enumerated() {
                let pair = jobs[(2 * index)..<(2 * index + 2)]
                #expect(Set(pair.map { $0.fields["token"] ?? "" }) == Set(devices.map(\.token)))
                #expect(pair.first?.fields["payload"] == pair.last?.fields["payload"])
                let payload = try JSONValue(try #require(pair.first?.fields["payload"]))
                let notification = result.notification
                #expect(
                    payload["aps"] == [
                        "alert": ["title": .string(notification.title), "body": .string(notification.body)], "sound": "default",
                        "badge": .number(Double(result.unreadCount)),
                    ]
                )
                #expect(payload["type"].stringValue == notification.type)
                #expect(payload["notificationId"].stringValue == notification.id.rawValue)
            }

            let full = try JSONValue(try #require(jobs[0].fields["payload"]))
            #expect(full.keys == ["aps", "type", "notificationId", "roomId", "elementId", "actorId", "orderId", "deepLink"])
            #expect(full["roomId"].stringValue == room.rawValue)
            #expect(full["elementId"].stringValue == element.rawValue)
            #expect(full["actorId"].stringValue == bob.id.rawValue)
            #expect(full["orderId"] == "42")
            #expect(full["deepLink"] == "roomcast://rooms/1")
            // Exactly as APNs gets it: slashes unescaped, no spaces.
            #expect(jobs[0].fields["payload"]?.contains("roomcast://rooms/1") == true)
            #expect(jobs[0].fields["payload"]?.hasPrefix(#"{"aps":{"alert":{"#) == true)

            let plain = try JSONValue(try #require(jobs[2].fields["payload"]))
            #expect(plain.keys == ["aps", "type", "notificationId"])
            #expect(plain["aps"]["badge"] == 2)
            let roomOnly = try JSONValue(try #require(jobs[4].fields["payload"]))
            #expect(roomOnly.keys == ["aps", "type", "notificationId", "roomId"])
            #expect(roomOnly["aps"]["badge"] == 2)
            #expect(roomOnly["aps"]["alert"] == ["title": "New room", "body": "Trip"])
        }
    }

    @Test("a user without devices gets no jobs; nor after removing the only one")
    func noDevicesNoJobs() async throws {
        try await withTestRedis { redis, _ in
            let alice = try await LiveFixture.users(redis, 1, prefix: "nojobs")[0]
            let store = NotificationStore(redis: redis)
            #expect(try await store.create(NotificationFixture.draft(1), for: alice.id).unreadCount == 1)
            #expect(try await NotificationFixture.exists(redis, RedisKeys.pushOutbox) == false)

            let tokens = PushTokenStore(redis: redis)
            let device = try PushToken(token: NotificationFixture.token(1), platform: "ios")
            try await tokens.register(device, for: alice.id)
            #expect(try await tokens.remove(device.token, for: alice.id))
            #expect(try await store.create(NotificationFixture.draft(2), for: alice.id).unreadCount == 2)
            #expect(try await NotificationFixture.exists(redis, RedisKeys.pushOutbox) == false)
        }
    }

    @Test("payload text with quotes, backslashes, newlines, control characters and emoji is valid JSON and round-trips")
    func payloadEscaping() async throws {
        try await withTestRedis { redis, _ in
            let alice = try await LiveFixture.users(redis, 1, prefix: "escape")[0]
            try await PushTokenStore(redis: redis).register(try PushToken(token: NotificationFixture.token(1), platform: "ios"), for: alice.id)
            let store = NotificationStore(redis: redis)
            let title = #"He said "hi" \o/ }],"#
            let body = "line 1\nline 2\t\u{01} — ünïcødé 🎉 </script>"
            let data = ["quote": #""},"aps":{"badge":99}"#, "path": #"C:\dir\"#]
            let created = try await store.create(NotificationDraft(type: "t", title: title, body: body, data: data), for: alice.id)
            let job = try #require(try await NotificationFixture.stream(redis, RedisKeys.pushOutbox).first)
            let payload = try JSONValue(try #require(job.fields["payload"]))
            #expect(payload["aps"] == ["alert": ["title": .string(title), "body": .string(body)], "sound": "default", "badge": 1])
            #expect(payload["quote"].stringValue == data["quote"])
            #expect(payload["path"].stringValue == data["path"])
            #expect(payload.keys == ["aps", "type", "notificationId", "quote", "path"])

            // The notification itself too, as stored and as listed.
            let listed = try #require(try await store.page(for: alice.id, after: nil, limit: 1).notifications.first)
            #expect(listed == created.notification)
            #expect(listed.title == title && listed.body == body && listed.data == data)
        }
    }
}

/// PushOutbox on a real Redis: the consumer group, handing out jobs, retries, finishing and retiring.
@Suite("PushOutbox against a real redis-server")
struct PushOutboxTests {
    static let user = UserID("outbox-user")!

    static func outbox(_ redis: any RedisClientProtocol) async throws -> PushOutbox {
        let outbox = PushOutbox(redis: redis)
        try await outbox.prepare()
        return outbox
    }

    static func enqueue(_ redis: any RedisClientProtocol, _ count: Int, prefix: String = "n") async throws -> [String] {
        try await NotificationFixture.enqueue(redis, count, user: user, token: NotificationFixture.token(1), prefix: prefix)
    }

    @Test("prepare creates the stream and group, is idempotent, and jobs enqueued before it are still handed out")
    func prepare() async throws {
        try await withTestRedis { redis, _ in
            let outbox = PushOutbox(redis: redis)
            let early = try await Self.enqueue(redis, 2, prefix: "early")
            try await outbox.prepare()
            try await outbox.prepare()
            let groups = try await redis.send("XINFO", "GROUPS", RedisKeys.pushOutbox)
            guard case .array(let list) = groups else { throw FrameError("\(groups)") }
            #expect(list.count == 1)
            #expect(list.first?.fields["name"] == RedisKeys.pushWorkersGroup)
            let jobs = try await outbox.takeNew(for: "a", count: 10)
            #expect(jobs.map(\.id) == early)

            // On an empty server: the stream is made (MKSTREAM).
            try await withTestRedis { other, _ in
                try await PushOutbox(redis: other).prepare()
                try await PushOutbox(redis: other).prepare()
                #expect(try await NotificationFixture.exists(other, RedisKeys.pushOutbox))
                #expect(try await PushOutbox(redis: other).takeNew(for: "a", count: 10).isEmpty)
            }
        }
    }

    @Test("takeNew hands each job to one consumer only, with its fields, deliveries 1; nothing new gives []")
    func takeNew() async throws {
        try await withTestRedis { redis, _ in
            let outbox = try await Self.outbox(redis)
            #expect(try await outbox.takeNew(for: "a", count: 10).isEmpty)
            let ids = try await Self.enqueue(redis, 10)

            let a = try await outbox.takeNew(for: "a", count: 4)
            let b = try await outbox.takeNew(for: "b", count: 100)
            #expect(a.map(\.id) == Array(ids[..<4]))
            #expect(b.map(\.id) == Array(ids[4...]))
            #expect(try await outbox.takeNew(for: "a", count: 10).isEmpty)
            #expect(try await outbox.takeNew(for: "c", count: 10).isEmpty)

            for (index, job) in (a + b).enumerated() {
                #expect(job.user == Self.user)
                #expect(job.token == NotificationFixture.token(1))
                #expect(job.notification == "n\(index)")
                #expect(String(buffer: job.payload) == #"{"aps":{"badge":\#(index + 1)}}"#)
                #expect(job.deliveries == 1)
            }
            let pending = try await NotificationFixture.pending(redis)
            #expect(Set(pending.keys) == Set(ids))
            #expect(pending.values.filter { $0.consumer == "a" }.count == 4)
            #expect(pending.values.filter { $0.consumer == "b" }.count == 6)
            #expect(pending.values.allSatisfy { $0.deliveries == 1 })
        }
    }

    @Test("two consumers taking concurrently never get the same job")
    func takeNewConcurrently() async throws {
        try await withTestRedis(poolSize: 4) { redis, _ in
            let outbox = try await Self.outbox(redis)
            let ids = try await Self.enqueue(redis, 60)
            let taken = try await withThrowingTaskGroup(of: (String, [String]).self) { group in
                for consumer in ["a", "b"] {
                    group.addTask {
                        var mine: [String] = []
                        while true {
                            let jobs = try await outbox.takeNew(for: consumer, count: 3)
                            if jobs.isEmpty { return (consumer, mine) }
                            mine += jobs.map(\.id)
                        }
                    }
                }
                return try await group.reduce(into: [String: [String]]()) { $0[$1.0] = $1.1 }
            }
            let all = (taken["a"] ?? []) + (taken["b"] ?? [])
            #expect(all.count == 60)
            #expect(Set(all) == Set(ids))
            #expect(Set(taken["a"] ?? []).isDisjoint(with: Set(taken["b"] ?? [])))
        }
    }

    @Test("a job enqueued by NotificationStore.create comes out of takeNew as enqueued")
    func jobFromNotification() async throws {
        try await withTestRedis { redis, _ in
            let outbox = try await Self.outbox(redis)
            let alice = try await LiveFixture.users(redis, 1, prefix: "job")[0]
            let device = try PushToken(token: NotificationFixture.token(5), platform: "ios")
            try await PushTokenStore(redis: redis).register(device, for: alice.id)
            let created = try await NotificationStore(redis: redis).create(NotificationFixture.draft(1), for: alice.id)
            let entry = try #require(try await NotificationFixture.stream(redis, RedisKeys.pushOutbox).first)
            let job = try #require(try await outbox.takeNew(for: "a", count: 10).first)
            #expect(job.id == entry.id)
            #expect(job.user == alice.id)
            #expect(job.token == device.token)
            #expect(job.notification == created.notification.id.rawValue)
            #expect(String(buffer: job.payload) == entry.fields["payload"])
            #expect(try JSONValue(String(buffer: job.payload))["aps"]["badge"] == 1)
        }
    }

    @Test("claimOverdue claims nothing before waitBeforeRetry, claims after it with deliveries + 1, and backs off by deliveries")
    func claimOverdue() async throws {
        try await withTestRedis { redis, _ in
            let outbox = try await Self.outbox(redis)
            let ids = try await Self.enqueue(redis, 3)
            // Long enough that a loaded machine never takes it between two calls.
            let wait = Duration.seconds(2)
            let taken = try await outbox.takeNew(for: "a", count: 10)
            #expect(taken.map(\.id) == ids)

            // Just handed out: not overdue.
            #expect(try await outbox.claimOverdue(for: "b", count: 10, waitBeforeRetry: { _ in wait }).isEmpty)
            #expect(try await NotificationFixture.pending(redis).values.allSatisfy { $0.consumer == "a" && $0.deliveries == 1 })

            try await Task.sleep(for: wait + .milliseconds(50))
            let claimed = try await outbox.claimOverdue(for: "b", count: 10, waitBeforeRetry: { _ in wait })
            #expect(claimed.map(\.id) == ids)
            #expect(claimed.allSatisfy { $0.deliveries == 2 })
            #expect(claimed.map(\.notification) == taken.map(\.notification))
            #expect(claimed.map { String(buffer: $0.payload) } == taken.map { String(buffer: $0.payload) })
            #expect(claimed.allSatisfy { $0.user == Self.user && $0.token == NotificationFixture.token(1) })
            let pending = try await NotificationFixture.pending(redis)
            #expect(pending.values.allSatisfy { $0.consumer == "b" && $0.deliveries == 2 })

            // Claiming resets the idle time: nothing for anyone right away.
            #expect(try await outbox.claimOverdue(for: "a", count: 10, waitBeforeRetry: { _ in wait }).isEmpty)

            // The wait grows with deliveries: after 2 deliveries a 100 ms rule for first retries does not apply.
            let backOff: (Int) -> Duration = { deliveries in deliveries <= 1 ? .milliseconds(100) : .seconds(60) }
            try await Task.sleep(for: .milliseconds(150))
            #expect(try await outbox.claimOverdue(for: "a", count: 10, waitBeforeRetry: backOff).isEmpty)
            #expect(try await NotificationFixture.pending(redis).values.allSatisfy { $0.consumer == "b" && $0.deliveries == 2 })

            // count limits how many are looked at.
            try await Task.sleep(for: .milliseconds(150))
            let two = try await outbox.claimOverdue(for: "c", count: 2, waitBeforeRetry: { _ in .milliseconds(100) })
            #expect(two.map(\.id) == Array(ids[..<2]))
            #expect(two.allSatisfy { $0.deliveries == 3 })
        }
    }

    @Test("renew: the holder keeps its job, idle time restarted and deliveries unchanged; a worker it was claimed from, or whose job is finished, does not")
    func renew() async throws {
        try await withTestRedis { redis, _ in
            let outbox = try await Self.outbox(redis)
            let ids = try await Self.enqueue(redis, 2)
            // Long enough that a loaded machine never takes it between two calls.
            let wait = Duration.seconds(2)
            let taken = try await outbox.takeNew(for: "a", count: 10)
            try await Task.sleep(for: wait + .milliseconds(50))

            // Both overdue; the first renewed by its holder just before its send is not claimed.
            #expect(try await outbox.renew(taken[0], for: "a"))
            let claimed = try await outbox.claimOverdue(for: "b", count: 10, waitBeforeRetry: { _ in wait })
            #expect(claimed.map(\.id) == [ids[1]])
            var pending = try await NotificationFixture.pending(redis)
            #expect(pending[ids[0]]?.consumer == "a" && pending[ids[0]]?.deliveries == 1)
            #expect(pending[ids[1]]?.consumer == "b" && pending[ids[1]]?.deliveries == 2)

            // The worker the second was claimed from must not send it; its new holder may.
            #expect(try await outbox.renew(taken[1], for: "a") == false)
            #expect(try await outbox.renew(claimed[0], for: "b"))

            // A finished job is held by no one.
            #expect(try await outbox.finish(taken[0]))
            #expect(try await outbox.renew(taken[0], for: "a") == false)
            pending = try await NotificationFixture.pending(redis)
            #expect(Set(pending.keys) == [ids[1]])
            #expect(pending[ids[1]]?.consumer == "b" && pending[ids[1]]?.deliveries == 2)
        }
    }

    @Test("claimOverdue skips jobs finished meanwhile")
    func claimSkipsFinished() async throws {
        try await withTestRedis { redis, _ in
            let outbox = try await Self.outbox(redis)
            let ids = try await Self.enqueue(redis, 2)
            let taken = try await outbox.takeNew(for: "a", count: 10)
            #expect(try await outbox.finish(taken[0]))
            try await Task.sleep(for: .milliseconds(150))
            let claimed = try await outbox.claimOverdue(for: "b", count: 10, waitBeforeRetry: { _ in .milliseconds(100) })
            #expect(claimed.map(\.id) == [ids[1]])
        }
    }

    @Test("finish: acknowledged and deleted; a second finish, or the stale holder's, returns false")
    func finish() async throws {
        try await withTestRedis { redis, _ in
            let outbox = try await Self.outbox(redis)
            let ids = try await Self.enqueue(redis, 3)
            let taken = try await outbox.takeNew(for: "a", count: 10)

            #expect(try await outbox.finish(taken[0]) == true)
            #expect(try await NotificationFixture.stream(redis, RedisKeys.pushOutbox).map(\.id) == Array(ids[1...]))
            #expect(Set(try await NotificationFixture.pending(redis).keys) == Set(ids[1...]))
            #expect(try await outbox.finish(taken[0]) == false)
            #expect(try await outbox.finish(taken[0], failure: "late failure") == false)
            #expect(try await NotificationFixture.exists(redis, RedisKeys.pushDeadLetters) == false)

            // Claimed by b after a's send stalled; a finishes first: b's finish is the second.
            try await Task.sleep(for: .milliseconds(150))
            let claimed = try await outbox.claimOverdue(for: "b", count: 1, waitBeforeRetry: { _ in .milliseconds(100) })
            #expect(claimed.map(\.id) == [ids[1]])
            #expect(try await outbox.finish(taken[1]) == true)
            #expect(try await outbox.finish(claimed[0]) == false)

            #expect(try await outbox.finish(taken[2]) == true)
            #expect(try await redis.send(RedisCommand("XLEN", RedisKeys.pushOutbox), as: Int.self) == 0)
            #expect(try await NotificationFixture.pending(redis).isEmpty)
            #expect(try await NotificationFixture.exists(redis, RedisKeys.pushDeadLetters) == false)
        }
    }

    @Test("finish with a failure: a dead letter with the job's fields, job id, reason and attempts; once only")
    func finishWithFailure() async throws {
        try await withTestRedis { redis, _ in
            let outbox = try await Self.outbox(redis)
            let ids = try await Self.enqueue(redis, 2)
            let original = try await NotificationFixture.stream(redis, RedisKeys.pushOutbox)
            _ = try await outbox.takeNew(for: "a", count: 10)
            try await Task.sleep(for: .milliseconds(150))
            let claimed = try await outbox.claimOverdue(for: "b", count: 10, waitBeforeRetry: { _ in .milliseconds(100) })
            #expect(claimed.map(\.deliveries) == [2, 2])

            let reason = "refused by APNs: status 400 BadDeviceToken"
            #expect(try await outbox.finish(claimed[0], failure: reason) == true)
            #expect(try await outbox.finish(claimed[0], failure: reason) == false)
            #expect(try await NotificationFixture.stream(redis, RedisKeys.pushOutbox).map(\.id) == [ids[1]])
            #expect(Set(try await NotificationFixture.pending(redis).keys) == [ids[1]])

            let dead = try await NotificationFixture.stream(redis, RedisKeys.pushDeadLetters)
            #expect(dead.count == 1)
            var expected = original[0].fields
            expected["job"] = ids[0]
            expected["reason"] = reason
            expected["attempts"] = "2"
            #expect(dead.first?.fields == expected)
            #expect(Set(dead.first?.fields.keys.map { $0 } ?? []) == ["user", "token", "notification", "payload", "job", "reason", "attempts"])

            // A delivered job leaves no dead letter.
            #expect(try await outbox.finish(claimed[1]) == true)
            #expect(try await NotificationFixture.stream(redis, RedisKeys.pushDeadLetters).count == 1)
            #expect(try await redis.send(RedisCommand("XLEN", RedisKeys.pushOutbox), as: Int.self) == 0)
        }
    }

    @Test("retire removes a consumer holding nothing and keeps one holding jobs")
    func retire() async throws {
        try await withTestRedis { redis, _ in
            let outbox = try await Self.outbox(redis)
            _ = try await Self.enqueue(redis, 2)
            let held = try await outbox.takeNew(for: "holder", count: 1)
            let done = try await outbox.takeNew(for: "done", count: 1)
            #expect(held.count == 1 && done.count == 1)
            #expect(try await outbox.finish(done[0]))
            #expect(try await NotificationFixture.consumers(redis) == ["holder": 1, "done": 0])

            try await outbox.retire("holder")
            try await outbox.retire("done")
            try await outbox.retire("never-seen")
            #expect(try await NotificationFixture.consumers(redis) == ["holder": 1])

            // Its job still there to claim; once finished, it can retire.
            #expect(try await outbox.finish(held[0]))
            try await outbox.retire("holder")
            #expect(try await NotificationFixture.consumers(redis).isEmpty)
        }
    }
}
