/// One entry of `GET /api/rooms/my-rooms`: the room's fields, then `badges` and `hasUnread`.
public struct RoomListing: Hashable, Sendable, Encodable {
    /// The room, with its participants.
    public var room: Room
    /// The caller's unseen counts in it.
    public var badges: RoomBadges

    /// Creates a listing.
    public init(room: Room, badges: RoomBadges) {
        self.room = room
        self.badges = badges
    }

    /// Either badge above zero.
    public var hasUnread: Bool { badges.hasUnread }

    private enum CodingKeys: String, CodingKey {
        case badges, hasUnread
    }

    /// The room's own members, then `badges` and `hasUnread` beside them in the same object.
    public func encode(to encoder: any Encoder) throws {
        try room.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(badges, forKey: .badges)
        try container.encode(hasUnread, forKey: .hasUnread)
    }
}
