import NIOCore
public import RedisClient

/// A user's notifications and badge. The badge is the size of the unread set, so it is exact
/// however often and however concurrently a notification is marked read.
public struct NotificationStore: Sendable {
    private let redis: any RedisClientProtocol
    /// Notifications kept per user; the oldest go first.
    public var keptPerUser: Int

    /// Creates a store over a client.
    public init(redis: any RedisClientProtocol, keptPerUser: Int = 500) {
        self.redis = redis
        self.keptPerUser = keptPerUser
    }

    /// Stores `draft` for `user` as unread and sends `notification:new {notification, unreadCount}`
    /// and `badge:updated {unreadCount}` to the user's sockets in one atomic step, then enqueues a
    /// push job per device, in its platform's outbox, whose badge (`aps.badge`; for FCM
    /// `apns.payload.aps.badge`) is the new unread count.
    ///
    /// The outbox is one stream shared by all users, so on Redis Cluster it lives in another slot
    /// than the user's keys and cannot join the script. A node that dies between the two steps
    /// loses that notification's pushes, never the notification or the badge; the next push
    /// carries the exact count again, since a badge is absolute.
    /// - Returns: the notification and the unread count after it.
    /// - Throws: `invalid_payload` for a bad draft, `not_found` for an unknown user.
    @discardableResult
    public func create(_ draft: NotificationDraft, for user: UserID) async throws(RoomcastError) -> (notification: AppNotification, unreadCount: Int) {
        try draft.validate()
        let notification = AppNotification(
            id: draft.id ?? .random(), type: draft.type, title: draft.title, body: draft.body, roomId: draft.roomId,
            elementId: draft.elementId, actor: draft.actor, data: draft.data, read: false, createdAt: .now()
        )
        let apnsPush = try PushPayloadTemplate(for: notification)
        let fcmPush = try FCMMessageTemplate(for: notification)
        let json: String
        do {
            json = String(buffer: try JSONCoding.encode(notification))
        } catch {
            throw RoomcastError(.internalError, "could not encode the notification")
        }
        let created = try await redis.call(
            RoomcastFunctions.NotificationCreate(user: user, routing: NodeEventRouting(redis.configuration), notification: notification.id, json: json, kept: keptPerUser)
        )
        let unread = created.unread
        let devices = created.devices.sorted { $0.key < $1.key }.compactMap { token, record in
            PushTokenStore.platform(ofRecord: record).map { (token: token, platform: $0) }
        }
        if !devices.isEmpty {
            let apnsPayload = apnsPush.payload(badge: unread)
            let jobs = devices.map { device in
                let payload = device.platform == PushToken.fcm ? fcmPush.body(token: device.token, badge: unread) : apnsPayload
                return RedisCommand(
                    "XADD", RedisKeys.pushOutbox(for: device.platform), "*", "user", user.rawValue, "token", device.token, "notification",
                    notification.id.rawValue, "platform", device.platform, "payload", payload
                )
            }
            _ = try await mappingRedisErrors { () throws(RedisError) in try await redis.pipeline(jobs) }
        }
        return (notification, unread)
    }

    /// A page of `user`'s notifications, newest first, each with `read` set.
    /// - Parameters:
    ///   - cursor: the previous page's `nextCursor`; `nil` for the first page.
    ///   - limit: the most notifications on the page.
    /// - Throws: `invalid_payload` for a cursor this store did not give out.
    public func page(for user: UserID, after cursor: String?, limit: Int) async throws(RoomcastError) -> NotificationPage {
        var upper = "+inf"
        if let cursor {
            guard let sequence = Int(cursor), sequence > 0 else {
                throw RoomcastError(.invalidPayload, "cursor is not one this server gave out")
            }
            upper = "(\(sequence)"
        }
        let ranked = try await mappingRedisErrors { () throws(RedisError) in
            try await redis.send(
                RedisCommand("ZRANGE", RedisKeys.userNotifications(user), upper, "-inf", "BYSCORE", "REV", "LIMIT", 0, limit + 1, "WITHSCORES")
            )
        }
        guard let flat = try? [String](redisReply: ranked) else { throw RoomcastError(.internalError, "unexpected reply from ZRANGE") }
        var entries: [(id: String, sequence: String)] = []
        var index = 0
        while index + 1 < flat.count {
            entries.append((flat[index], flat[index + 1]))
            index += 2
        }
        let more = entries.count > limit
        entries = Array(entries.prefix(limit))
        guard !entries.isEmpty else { return NotificationPage(notifications: [], nextCursor: nil) }
        let ids = entries.map(\.id)
        let replies = try await mappingRedisErrors { () throws(RedisError) in
            try await redis.pipeline([
                RedisCommand("HMGET", [RedisKeys.userNotificationData(user)] + ids),
                RedisCommand("SMISMEMBER", [RedisKeys.userUnreadNotifications(user)] + ids),
            ])
        }
        guard case .array(let values) = replies[0], let unread = try? [Int](redisReply: replies[1]), unread.count == ids.count else {
            throw RoomcastError(.internalError, "unexpected reply reading notifications")
        }
        var notifications: [AppNotification] = []
        notifications.reserveCapacity(ids.count)
        for (value, isUnread) in zip(values, unread) {
            guard case .bulk(let json) = value, var notification = try? JSONCoding.decode(AppNotification.self, from: json) else { continue }
            notification.read = isUnread == 0
            notifications.append(notification)
        }
        return NotificationPage(notifications: notifications, nextCursor: more ? entries.last?.sequence : nil)
    }

    /// The badge of `user`.
    public func unreadCount(for user: UserID) async throws(RoomcastError) -> Int {
        let reply = try await mappingRedisErrors { () throws(RedisError) in
            try await redis.send(RedisCommand("SCARD", RedisKeys.userUnreadNotifications(user)))
        }
        guard let count = try? Int(redisReply: reply) else { throw RoomcastError(.internalError, "unexpected reply from SCARD") }
        return count
    }

    /// Marks notification `id` of `user` read; the user's sockets get `badge:updated` if the
    /// count changed.
    /// - Returns: the unread count after.
    /// - Throws: `not_found` for a notification the user does not have.
    public func markRead(_ id: NotificationID, for user: UserID) async throws(RoomcastError) -> Int {
        try await redis.call(RoomcastFunctions.NotificationRead(user: user, routing: NodeEventRouting(redis.configuration), notification: id)).unread
    }

    /// Marks every notification of `user` read; all the user's sockets get `badge:updated {0}`.
    /// - Returns: how many were unread.
    @discardableResult
    public func markAllRead(for user: UserID) async throws(RoomcastError) -> Int {
        try await redis.call(RoomcastFunctions.NotificationReadAll(user: user, routing: NodeEventRouting(redis.configuration))).unread
    }
}
