import Crypto
import HTTPTypes
import Hummingbird
import RoomcastCore

/// `POST /api/internal/notifications`: other backend services (follows, comments …) notify a
/// user with the same badge, realtime and push behaviour as Roomcast's own notifications.
///
/// Authenticated by the configured service key in `X-Roomcast-Service-Key`, not by a user token;
/// without a configured key the endpoint answers 404, and the node's OpenAPI document leaves it
/// out (``OpenAPIRoutes``).
struct InternalNotificationRoutes {
    static let keyHeader = HTTPField.Name("X-Roomcast-Service-Key")!
    static let path = "/api/internal/notifications"
    /// The operation's tag and security scheme in the OpenAPI document (left out with the
    /// operation by a node that has no service key).
    static let tag = "internal"
    static let securityScheme = "serviceKey"

    let notifications: NotificationStore
    let users: UserStore
    let serviceKey: String?

    /// `{userId, type, title, body?, roomId?, elementId?, actorId?, data?, id?}`; a repeated `id`
    /// raises the same notification again instead of adding one.
    struct CreateRequest: Decodable {
        var userId: UserID
        var type: String
        var title: String
        var body: String?
        var roomId: RoomID?
        var elementId: ElementID?
        var actorId: UserID?
        var data: [String: String]?
        var id: NotificationID?
    }

    struct Created: Encodable, Sendable {
        var notification: AppNotification
        var unreadCount: Int
    }

    func register(on router: some RouterMethods<RoomcastRequestContext>) {
        router.post(RouterPath(Self.path)) { request, context in
            guard let serviceKey else {
                throw RoomcastError(.notFound, "internal notifications are off: set notifications.service_key to enable them")
            }
            guard let presented = request.headers[Self.keyHeader], Self.matches(presented, serviceKey) else {
                throw RoomcastError(.unauthorized, "a valid \(Self.keyHeader) header is required")
            }
            let body = try await request.decodeJSON(as: CreateRequest.self, context: context)
            var actor: User?
            if let actorId = body.actorId {
                guard let found = try await users.user(actorId) else { throw RoomcastError(.notFound, "actor \(actorId) not found") }
                actor = found
            }
            let draft = NotificationDraft(
                id: body.id, type: body.type, title: body.title, body: body.body ?? "", roomId: body.roomId, elementId: body.elementId,
                actor: actor, data: body.data
            )
            let created = try await notifications.create(draft, for: body.userId)
            return APIResponse(status: .created, Created(notification: created.notification, unreadCount: created.unreadCount))
        }
    }

    /// Compares keys in constant time: the time taken says nothing about how much matched.
    static func matches(_ presented: String, _ expected: String) -> Bool {
        let digests = (SHA256.hash(data: Array(presented.utf8)), SHA256.hash(data: Array(expected.utf8)))
        return zip(digests.0, digests.1).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
    }
}
