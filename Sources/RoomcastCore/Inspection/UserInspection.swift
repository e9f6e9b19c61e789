/// What `roomcast inspect user` shows: one user's rooms, badge and devices, for operators.
public struct UserInspection: Sendable, Encodable {
    /// The user.
    public var user: User
    /// The notification badge (unread notifications).
    public var unreadNotifications: Int
    /// Sockets of the user connected now, over every node.
    public var connectedSockets: Int
    /// The user's rooms, most recently updated first.
    public var rooms: [RoomEntry]
    /// Devices registered for push.
    public var devices: [PushToken]

    /// One room of the user.
    public struct RoomEntry: Sendable, Encodable, Hashable {
        public var id: RoomID
        public var name: String?
        /// Everyone in the room, the user included.
        public var participants: [User]
        public var elementCount: Int
        /// Elements created since the user last had the room open.
        public var unseenElements: Int
        /// Messages sent since the user last had the room open.
        public var unseenMessages: Int
        /// Whether someone has the room open.
        public var isActive: Bool
        public var updatedAt: Timestamp
    }
}
