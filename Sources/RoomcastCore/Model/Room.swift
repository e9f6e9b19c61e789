/// A shared canvas and chat between its participants.
public struct Room: Hashable, Sendable, Codable {
    /// The room's id.
    public var id: RoomID
    /// Optional name; `nil` shows the participants' names in the app.
    public var name: String?
    /// Who created it.
    public var createdBy: UserID
    /// When it was created.
    public var createdAt: Timestamp
    /// Moves on element changes, clears and renames.
    public var updatedAt: Timestamp
    /// Whether someone has the room open right now (a live presence entry).
    public var isActive: Bool
    /// Everyone who may read, join and change the room.
    public var participants: [User]
    /// Number of elements on the canvas.
    public var elementCount: Int

    /// Creates a room value.
    public init(
        id: RoomID, name: String?, createdBy: UserID, createdAt: Timestamp, updatedAt: Timestamp,
        isActive: Bool = false, participants: [User], elementCount: Int = 0
    ) {
        self.id = id
        self.name = name
        self.createdBy = createdBy
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.isActive = isActive
        self.participants = participants
        self.elementCount = elementCount
    }

    enum CodingKeys: String, CodingKey {
        case id, name, createdBy, createdAt, updatedAt, isActive, participants, elementCount
    }

    /// Encodes every field; a room without a name has `"name": null` rather than no `name`, so
    /// a client merging `room:updated` sees a cleared name.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(name, forKey: .name)
        try container.encode(createdBy, forKey: .createdBy)
        try container.encode(createdAt, forKey: .createdAt)
        try container.encode(updatedAt, forKey: .updatedAt)
        try container.encode(isActive, forKey: .isActive)
        try container.encode(participants, forKey: .participants)
        try container.encode(elementCount, forKey: .elementCount)
    }
}
