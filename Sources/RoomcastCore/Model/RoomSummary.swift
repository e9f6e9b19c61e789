/// A room as listed under a person in `GET /api/rooms/grouped-by-person`: no participants.
public struct RoomSummary: Hashable, Sendable, Codable {
    /// The room's id.
    public var id: RoomID
    /// Optional name; encoded as `null` when there is none.
    public var name: String?
    /// When it was created.
    public var createdAt: Timestamp
    /// The last element change, clear or rename.
    public var updatedAt: Timestamp
    /// Whether someone has the room open right now.
    public var isActive: Bool
    /// Number of elements on the canvas.
    public var elementCount: Int

    /// The summary of a room.
    public init(_ room: Room) {
        id = room.id
        name = room.name
        createdAt = room.createdAt
        updatedAt = room.updatedAt
        isActive = room.isActive
        elementCount = room.elementCount
    }

    private enum CodingKeys: String, CodingKey {
        case id, name, createdAt, updatedAt, isActive, elementCount
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(name, forKey: .name)
        try container.encode(createdAt, forKey: .createdAt)
        try container.encode(updatedAt, forKey: .updatedAt)
        try container.encode(isActive, forKey: .isActive)
        try container.encode(elementCount, forKey: .elementCount)
    }
}
