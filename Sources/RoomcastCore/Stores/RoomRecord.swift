/// A room as read from Redis, before its participants' profiles are looked up.
struct RoomRecord: Sendable {
    /// The hash fields read with `HMGET`, in this order.
    static let hashFields = ["name", "createdBy", "createdAt", "updatedAt", "elementCount", "messageSeq", "presence"]

    var id: RoomID
    var name: String?
    var createdBy: UserID
    var createdAt: Timestamp
    var updatedAt: Timestamp
    var elementCount: Int
    var isActive: Bool
    /// Sorted, so a room reads the same every time.
    var participantIDs: [UserID]
    /// The reader's unseen counts, when asked for.
    var badges = RoomBadges()
    /// Messages ever sent in the room (`messageSeq`): unseen messages are counted from it.
    var messageSequence: Int
    /// The users present at the last presence change, as the JSON array the room hash keeps.
    var announcedPresence: String

    /// Reads a room hash; `nil` when it is missing or damaged.
    /// - Parameters:
    ///   - participants: the participant set's members.
    ///   - live: the room's unexpired presence entries.
    init?(id: RoomID, fields: [String: String], participants: [String], live: Int) {
        guard let createdBy = fields["createdBy"].flatMap(UserID.init), let createdAt = fields["createdAt"].flatMap(Int64.init),
            let updatedAt = fields["updatedAt"].flatMap(Int64.init)
        else { return nil }
        self.id = id
        // An empty stored name is no name.
        self.name = fields["name"].flatMap { $0.isEmpty ? nil : $0 }
        self.createdBy = createdBy
        self.createdAt = Timestamp(milliseconds: createdAt)
        self.updatedAt = Timestamp(milliseconds: updatedAt)
        self.elementCount = fields["elementCount"].flatMap(Int.init) ?? 0
        self.messageSequence = fields["messageSeq"].flatMap(Int.init) ?? 0
        self.announcedPresence = fields["presence"] ?? "[]"
        self.isActive = live > 0
        self.participantIDs = participants.compactMap(UserID.init).sorted()
    }

    /// The messages `user` has not seen (``UnseenMessages``).
    /// - Parameter readPosition: the user's entry in `room:{<roomId>}:read:messages`.
    func unseenMessages(for user: UserID, readPosition: Int?) -> Int {
        UnseenMessages.count(for: user, sequence: messageSequence, readPosition: readPosition, announcedPresence: announcedPresence)
    }

    /// The room, with the participants' profiles.
    func room(participants: [User]) -> Room {
        Room(
            id: id, name: name, createdBy: createdBy, createdAt: createdAt, updatedAt: updatedAt, isActive: isActive,
            participants: participants, elementCount: elementCount
        )
    }
}
