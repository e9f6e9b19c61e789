extension RedisKeys {
    // MARK: Notifications (all in the user's slot, so one script sees them together)

    /// Sorted set: the user's notification ids, scored by a per-user sequence (newest highest);
    /// the sequence is the `notificationSeq` field of the user hash.
    public static func userNotifications(_ id: UserID) -> String { "user:{\(id)}:notifications" }
    /// Hash: notification id → the notification as client JSON (with `read: false`).
    public static func userNotificationData(_ id: UserID) -> String { "user:{\(id)}:notifications:data" }
    /// Set: the ids of unread notifications; its size is the badge. `SREM` counts a repeated read once.
    public static func userUnreadNotifications(_ id: UserID) -> String { "user:{\(id)}:notifications:unread" }

    // MARK: Push

    /// Hash: the user's device tokens → `{"platform", "updatedAt"}` JSON.
    public static func userPushTokens(_ id: UserID) -> String { "user:{\(id)}:push-tokens" }
    /// String: the user a device token belongs to, so a device that changes account leaves the old one.
    public static func pushTokenOwner(_ token: String) -> String { "push-token:{\(token)}" }
    /// String: SHA-256 (hex) of the app installation a device token is bound to, when the app
    /// registered it with one; deleted with the owner record.
    public static func pushTokenInstallation(_ token: String) -> String { "push-token:{\(token)}:installation" }
    /// Stream: APNs push jobs waiting for delivery (`user`, `token`, `notification`, `platform`,
    /// `payload`), consumed by the ``pushWorkersGroup`` consumer group.
    public static let pushOutbox = "push:{outbox}"
    /// Stream: the push jobs of one platform: ``pushOutbox`` for `ios` (APNs), `push:{outbox}:fcm`
    /// for `fcm`. A stream per platform, so that a node without a platform's credentials never
    /// takes its jobs, which wait for a node that has them.
    public static func pushOutbox(for platform: String) -> String {
        platform == "ios" ? pushOutbox : "\(pushOutbox):\(platform)"
    }
    /// Stream: push jobs given up on (the job's fields plus `reason` and `attempts`).
    public static let pushDeadLetters = "push:{outbox}:dead"
    /// The consumer group of the gateway nodes' push workers on each ``pushOutbox(for:)``.
    public static let pushWorkersGroup = "push-workers"
}
