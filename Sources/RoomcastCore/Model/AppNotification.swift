/// Marks notification identifiers.
public enum NotificationKind {}
/// Identifies one notification of one user.
public typealias NotificationID = Identifier<NotificationKind>

/// Something that happened for a user, listed newest first and counted in the badge until read.
///
/// Named after the app's own type: `Notification` would clash with Foundation's.
public struct AppNotification: Hashable, Sendable, Codable {
    /// The notification's id (unique per user).
    public var id: NotificationID
    /// What happened: `element_reaction`, `room_created`, or a backend service's own type.
    public var type: String
    /// The headline, also the push alert's title.
    public var title: String
    /// The text, also the push alert's body.
    public var body: String
    /// The room it is about, when there is one.
    public var roomId: RoomID?
    /// The element it is about, when there is one.
    public var elementId: ElementID?
    /// Who caused it, when it was a person.
    public var actor: User?
    /// Extra fields for the app (a service's own ids), sent in the push too.
    public var data: [String: String]?
    /// Whether the user has read it.
    public var read: Bool
    /// When it was created (or raised again).
    public var createdAt: Timestamp

    /// Creates a notification.
    public init(
        id: NotificationID, type: String, title: String, body: String, roomId: RoomID? = nil, elementId: ElementID? = nil,
        actor: User? = nil, data: [String: String]? = nil, read: Bool = false, createdAt: Timestamp
    ) {
        self.id = id
        self.type = type
        self.title = title
        self.body = body
        self.roomId = roomId
        self.elementId = elementId
        self.actor = actor
        self.data = data
        self.read = read
        self.createdAt = createdAt
    }
}
