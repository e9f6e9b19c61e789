/// Unseen chat messages are derived, not counted per user: a message costs Redis the same work
/// whatever the room's size (`message_send.lua`).
///
/// The room hash keeps `messageSeq` (messages ever sent) and `presence` (the users present at the
/// last presence change); `room:{<roomId>}:read:messages` keeps each user's read position, the
/// sequence they had seen when they last joined or left (`_presence.lua`). A user who sends while
/// away moves their own position along.
enum UnseenMessages {
    /// The messages `user` has not seen: none while they have the room open, else those sent
    /// since their read position.
    /// - Parameters:
    ///   - sequence: the room's `messageSeq`.
    ///   - readPosition: the user's entry in the read positions hash (none: 0).
    ///   - announcedPresence: the room hash's `presence` field, a JSON array of user ids.
    static func count(for user: UserID, sequence: Int, readPosition: Int?, announcedPresence: String) -> Int {
        // Ids are [A-Za-z0-9_-]: a quoted id is found in the array as the script finds it.
        if announcedPresence.contains("\"\(user)\"") { return 0 }
        return max(0, sequence - (readPosition ?? 0))
    }
}
