/// One page of a user's notifications, newest first.
public struct NotificationPage: Hashable, Sendable {
    /// The notifications of this page.
    public var notifications: [AppNotification]
    /// Where the next page starts (opaque to clients); `nil` on the last page.
    public var nextCursor: String?

    /// Creates a page.
    public init(notifications: [AppNotification], nextCursor: String?) {
        self.notifications = notifications
        self.nextCursor = nextCursor
    }
}

/// The badge: how many notifications a user has not read.
public struct UnreadCount: Hashable, Sendable, Codable {
    /// The number of unread notifications.
    public var unreadCount: Int

    /// Creates a count.
    public init(unreadCount: Int) {
        self.unreadCount = unreadCount
    }
}
