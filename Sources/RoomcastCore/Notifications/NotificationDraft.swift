/// What a source asks to notify a user of; ``NotificationStore/create(_:for:)`` checks it and
/// turns it into an ``AppNotification``.
public struct NotificationDraft: Hashable, Sendable {
    /// Types Roomcast itself creates.
    public static let elementReaction = "element_reaction"
    /// A room was created with the user in it.
    public static let roomCreated = "room_created"

    /// Longest title, in characters.
    public static let maximumTitleLength = 200
    /// Longest body, in characters.
    public static let maximumBodyLength = 1_000
    /// Most `data` fields.
    public static let maximumDataFields = 16
    /// Keys `data` may not use: they are the push payload's own.
    static let reservedDataKeys: Set<String> = ["aps", "type", "notificationId", "roomId", "elementId", "actorId"]

    /// A stable id makes the same event raise one notification, not one per repeat: a heart
    /// removed and given again moves its notification back to the top instead of adding another.
    public var id: NotificationID?
    /// See ``AppNotification/type``.
    public var type: String
    /// See ``AppNotification/title``.
    public var title: String
    /// See ``AppNotification/body``.
    public var body: String
    /// See ``AppNotification/roomId``.
    public var roomId: RoomID?
    /// See ``AppNotification/elementId``.
    public var elementId: ElementID?
    /// See ``AppNotification/actor``.
    public var actor: User?
    /// See ``AppNotification/data``.
    public var data: [String: String]?

    /// Creates a draft.
    public init(
        id: NotificationID? = nil, type: String, title: String, body: String, roomId: RoomID? = nil, elementId: ElementID? = nil,
        actor: User? = nil, data: [String: String]? = nil
    ) {
        self.id = id
        self.type = type
        self.title = title
        self.body = body
        self.roomId = roomId
        self.elementId = elementId
        self.actor = actor
        self.data = data
    }

    /// Checks sizes and names.
    /// - Throws: `invalid_payload` naming the first field that is wrong.
    public func validate() throws(RoomcastError) {
        guard !type.isEmpty, type.utf8.count <= 64,
            type.utf8.allSatisfy({ Self.isTypeCharacter($0) })
        else {
            throw RoomcastError(.invalidPayload, "type must be 1-64 characters of a-z, 0-9, '_', '.' or '-'")
        }
        guard !title.isEmpty, title.count <= Self.maximumTitleLength else {
            throw RoomcastError(.invalidPayload, "title must be 1-\(Self.maximumTitleLength) characters")
        }
        guard body.count <= Self.maximumBodyLength else {
            throw RoomcastError(.invalidPayload, "body must be at most \(Self.maximumBodyLength) characters")
        }
        guard let data else { return }
        guard data.count <= Self.maximumDataFields else {
            throw RoomcastError(.invalidPayload, "data may have at most \(Self.maximumDataFields) fields")
        }
        if let key = data.keys.sorted().first(where: { Self.isReservedDataKey($0) || $0.isEmpty || $0.count > 64 }) {
            throw RoomcastError(.invalidPayload, "data key '\(key)' is reserved or not 1-64 characters")
        }
    }

    /// The payload's own keys, and those FCM refuses in `data` (`from`, `notification`,
    /// `message_type`, and any starting with `google` or `gcm`).
    private static func isReservedDataKey(_ key: String) -> Bool {
        reservedDataKeys.contains(key) || ["from", "notification", "message_type"].contains(key) || key.hasPrefix("google")
            || key.hasPrefix("gcm")
    }

    private static func isTypeCharacter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "."),
            UInt8(ascii: "-"):
            return true
        default:
            return false
        }
    }
}
