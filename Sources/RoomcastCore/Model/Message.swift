/// A chat message in a room.
public struct Message: Hashable, Sendable, Codable {
    /// The message's id.
    public var id: MessageID
    /// The room it was sent in.
    public var roomId: RoomID
    /// Its sender.
    public var userId: UserID
    /// The text, 1 to ``MessageStore/maxTextLength`` bytes of UTF-8.
    public var text: String
    /// When Redis stored it.
    public var createdAt: Timestamp
    /// The sender, for display.
    public var user: User

    /// The longest message text accepted unless a node sets another, in bytes of UTF-8 (4000
    /// characters of four bytes).
    public static let defaultMaximumLength = 16_000

    /// Creates a message value.
    public init(id: MessageID, roomId: RoomID, userId: UserID, text: String, createdAt: Timestamp, user: User) {
        self.id = id
        self.roomId = roomId
        self.userId = userId
        self.text = text
        self.createdAt = createdAt
        self.user = user
    }
}
