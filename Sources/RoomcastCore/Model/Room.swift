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
    /// Rooms are never locked or archived yet: always true.
    public var isActive: Bool
    /// Everyone who may read, join and change the room.
    public var participants: [User]
    /// Number of elements on the canvas.
    public var elementCount: Int

    /// Creates a room value.
    public init(
        id: RoomID, name: String?, createdBy: UserID, createdAt: Timestamp, updatedAt: Timestamp,
        isActive: Bool = true, participants: [User], elementCount: Int = 0
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
}
