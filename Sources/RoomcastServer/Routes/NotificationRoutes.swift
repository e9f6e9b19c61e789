import Hummingbird
import RoomcastCore

/// `GET /api/notifications`, `GET /api/notifications/unread-count`,
/// `POST /api/notifications/:id/read`, `POST /api/notifications/read-all`: the caller's own.
struct NotificationRoutes {
    let notifications: NotificationStore

    func register(on router: some RouterMethods<RoomcastRequestContext>) {
        router.get("/api/notifications") { request, context in
            let user = try context.requireUser()
            let page = try PageRequest(request)
            let notifications = try await notifications.page(for: user, after: page.cursor, limit: page.limit)
            return PagedAPIResponse(notifications.notifications, nextCursor: notifications.nextCursor)
        }
        router.get("/api/notifications/unread-count") { _, context in
            APIResponse(UnreadCount(unreadCount: try await notifications.unreadCount(for: try context.requireUser())))
        }
        // Constant paths win over `:id` in the router whatever the order.
        router.post("/api/notifications/read-all") { _, context in
            try await notifications.markAllRead(for: try context.requireUser())
            return APIResponse(UnreadCount(unreadCount: 0))
        }
        router.post("/api/notifications/:id/read") { _, context in
            let user = try context.requireUser()
            guard let id = context.parameters.get("id").flatMap(NotificationID.init) else {
                throw RoomcastError(.notFound, "notification not found")
            }
            return APIResponse(UnreadCount(unreadCount: try await notifications.markRead(id, for: user)))
        }
    }
}
