/// One person of `GET /api/rooms/grouped-by-person`: the user's fields and the rooms the caller
/// shares with them, most recently updated first.
public struct PersonRooms: Hashable, Sendable, Encodable {
    /// The other person.
    public var user: User
    /// The shared rooms, by `updatedAt` descending.
    public var rooms: [RoomSummary]

    /// Creates a group.
    public init(user: User, rooms: [RoomSummary]) {
        self.user = user
        self.rooms = rooms
    }

    private enum CodingKeys: String, CodingKey {
        case rooms
    }

    /// The user's own members, then `rooms` beside them in the same object.
    public func encode(to encoder: any Encoder) throws {
        try user.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(rooms, forKey: .rooms)
    }
}
