/// What `roomcast inspect room` shows: one room as Redis holds it, for operators.
public struct RoomInspection: Sendable, Encodable {
    /// The room's id.
    public var id: RoomID
    /// Its name, when set.
    public var name: String?
    /// Who created it.
    public var createdBy: UserID
    /// When it was created.
    public var createdAt: Timestamp
    /// When its canvas or name last changed.
    public var updatedAt: Timestamp
    /// Elements on the canvas (the room hash's `elementCount`).
    public var elementCount: Int
    /// Chat messages kept in the room's message stream.
    public var messageCount: Int
    /// The participants with their unseen counts and presence.
    public var participants: [Participant]
    /// The elements in z-order, bottom first.
    public var elements: [ElementEntry]
    /// Who has the room open.
    public var presence: Presence
    /// The room's event stream.
    public var stream: Stream

    /// One participant.
    public struct Participant: Sendable, Encodable, Hashable {
        public var id: UserID
        public var username: String
        public var displayName: String?
        /// Elements created since the user last had the room open.
        public var unseenElements: Int
        /// Messages sent since the user last had the room open.
        public var unseenMessages: Int
        /// Whether a socket of the user has the room open.
        public var present: Bool
    }

    /// One element of the canvas.
    public struct ElementEntry: Sendable, Encodable, Hashable {
        public var id: ElementID
        public var type: String
        public var zIndex: Int
        public var createdBy: UserID
        /// The creator's username, when known.
        public var creator: String?
        public var createdAt: Timestamp
        /// Hearts on it.
        public var reactionCount: Int
        /// Who gave them, newest first.
        public var reactions: [Heart]
    }

    /// One heart on an element.
    public struct Heart: Sendable, Encodable, Hashable {
        public var userId: UserID
        public var username: String
        public var createdAt: Timestamp
    }

    /// Who has the room open.
    public struct Presence: Sendable, Encodable, Hashable {
        /// Whether anyone has it open.
        public var isActive: Bool
        /// The present users.
        public var userIds: [UserID]
        /// Open sockets (one user may have several).
        public var sockets: Int
    }

    /// The room's event stream (`room:{<roomId>}:stream`), whose entry ids are the offsets.
    public struct Stream: Sendable, Encodable, Hashable {
        /// Events kept.
        public var length: Int
        /// The oldest offset kept: clients that saw an older one get a snapshot, not a replay.
        public var firstOffset: String?
        /// The newest offset.
        public var lastOffset: String?
        /// The latest events, newest first.
        public var recent: [Event]
    }

    /// One event of the stream.
    public struct Event: Sendable, Encodable, Hashable {
        public var offset: String
        /// The Socket.IO event name (`element:created` ...).
        public var event: String
    }
}
