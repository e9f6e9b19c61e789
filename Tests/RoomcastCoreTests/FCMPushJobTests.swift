import Foundation
import NIOCore
import RedisClient
import RoomcastCore
import RoomcastTestSupport
import Testing

/// FCM registration tokens: what the app may register, and the jobs a notification enqueues for
/// them (their own outbox, the whole `messages:send` body with the badge).
@Suite("FCM push tokens and jobs")
struct FCMPushJobTests {
    /// A registration token as Firebase hands them out: `<instance id>:APA91b…`, mixed case.
    static let fcmToken = "dXbcF1nQRk2:APA91bHun4MxP5egoKMwt2KZFBaFUH-1RYqx" + String(repeating: "Zq_9", count: 30)

    @Test("an fcm token of letters, digits, '-', '_', ':' and '.' is accepted as is, case kept")
    func acceptsFCMTokens() throws {
        let device = try PushToken(token: Self.fcmToken, platform: "FCM")
        #expect(device.token == Self.fcmToken)
        #expect(device.platform == "fcm")
        let longest = String(repeating: "A", count: PushToken.maximumFCMTokenSize - 1) + ":"
        #expect(try PushToken(token: longest, platform: "fcm").token == longest)
        #expect(PushToken.normalized(Self.fcmToken) == Self.fcmToken)
        #expect(PushToken.normalized("ABCDEF0123456789") == "abcdef0123456789")
    }

    @Test(
        "fcm tokens out of bounds or with other characters are invalid_payload",
        arguments: [
            String(repeating: "a", count: 15), String(repeating: "a", count: PushToken.maximumFCMTokenSize + 1), "",
            "dXbcF1nQRk2:APA91b with space", "dXbcF1nQRk2:APA91b\"quote\"", "dXbcF1nQRk2:APA91b/slash", "dXbcF1nQRk2:APA91b{tag}",
            "dXbcF1nQRk2:APA91bé-not-ascii",
        ]
    )
    func refusesFCMTokens(token: String) {
        do {
            _ = try PushToken(token: token, platform: "fcm")
            Issue.record("accepted \(token)")
        } catch {
            #expect((error as any Error as? RoomcastError)?.code == .invalidPayload, "\(error)")
        }
    }

    @Test("a notification enqueues an ios job in push:{outbox} and an fcm job in push:{outbox}:fcm, each with the badge")
    func jobsPerPlatform() async throws {
        try await withTestRedis { redis, _ in
            let user = try await UserStore(redis: redis).create(username: "alice", passwordHash: "h", displayName: nil)
            let tokens = PushTokenStore(redis: redis)
            try await tokens.register(try PushToken(token: NotificationFixture.token(1), platform: "ios"), for: user.id)
            try await tokens.register(try PushToken(token: Self.fcmToken, platform: "fcm"), for: user.id)
            #expect(try await tokens.tokens(for: user.id).map(\.platform).sorted() == ["fcm", "ios"])
            let store = NotificationStore(redis: redis)
            _ = try await store.create(NotificationDraft(type: "follow", title: "First", body: ""), for: user.id)
            let draft = NotificationDraft(
                type: "follow", title: "Bob followed you", body: "Tap to view \"Bob\"", data: ["followerId": "42", "emoji": "🎉"]
            )
            let (notification, unread) = try await store.create(draft, for: user.id)
            #expect(unread == 2)

            let ios = try await NotificationFixture.stream(redis, RedisKeys.pushOutbox)
            #expect(ios.count == 2)
            #expect(ios.allSatisfy { $0.fields["platform"] == "ios" && $0.fields["token"] == NotificationFixture.token(1) })
            let fcm = try await NotificationFixture.stream(redis, RedisKeys.pushOutbox(for: "fcm"))
            #expect(fcm.count == 2)
            let job = try #require(fcm.last)
            #expect(job.fields["platform"] == "fcm")
            #expect(job.fields["token"] == Self.fcmToken)
            #expect(job.fields["user"] == user.id.rawValue)
            #expect(job.fields["notification"] == notification.id.rawValue)
            let body = try JSONValue(try #require(job.fields["payload"]))
            #expect(Self.names(body) == ["message"])
            let message = body["message"]
            #expect(Self.names(message) == ["token", "notification", "data", "apns"])
            #expect(message["token"].stringValue == Self.fcmToken)
            #expect(message["notification"] == ["title": "Bob followed you", "body": "Tap to view \"Bob\""])
            #expect(
                message["data"] == ["type": "follow", "notificationId": .string(notification.id.rawValue), "followerId": "42", "emoji": "🎉"]
            )
            #expect(message["apns"] == ["payload": ["aps": ["sound": "default", "badge": 2]]])
            #expect(try JSONValue(try #require(fcm.first?.fields["payload"]))["message"]["apns"]["payload"]["aps"]["badge"] == 1)
        }
    }

    static func names(_ value: JSONValue) -> Set<String> {
        if case .object(let members) = value { Set(members.keys) } else { [] }
    }

    @Test("FCM's reserved data keys are refused before anything is stored", arguments: ["from", "notification", "message_type", "google.c.a", "gcm.n.e"])
    func reservedDataKeys(key: String) {
        do {
            try NotificationDraft(type: "follow", title: "Hi", body: "", data: [key: "x"]).validate()
            Issue.record("accepted data key \(key)")
        } catch {
            #expect((error as any Error as? RoomcastError)?.code == .invalidPayload, "\(error)")
        }
    }
}
