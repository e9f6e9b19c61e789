import Crypto

extension NotificationDraft {
    /// `actor` hearted `subject`'s element: for the element's creator. The id is derived from the
    /// element and the actor, so hearting the same element again raises the same notification
    /// instead of piling up new ones.
    public static func reaction(to subject: ReactionSubject, by actor: User) -> NotificationDraft {
        let digest = SHA256.hash(data: Array("\(subject.roomId)/\(subject.elementId)/\(actor.id)".utf8))
        let id = "r" + digest.prefix(16).map { byte in String(byte, radix: 16).leftPadded(to: 2) }.joined()
        return NotificationDraft(
            id: NotificationID(id), type: elementReaction, title: "\(actor.shownName) hearted your \(subject.elementType)",
            body: subject.roomName.map { "In \($0)" } ?? "Tap to see it", roomId: subject.roomId, elementId: subject.elementId,
            actor: actor
        )
    }

    /// `creator` started `room` with the recipient in it.
    public static func roomCreated(_ room: Room, by creator: User) -> NotificationDraft {
        NotificationDraft(
            type: roomCreated, title: "\(creator.shownName) started a room with you", body: room.name ?? "Tap to open it",
            roomId: room.id, actor: creator
        )
    }
}

extension User {
    /// The name people see: the display name, else the username.
    var shownName: String { displayName ?? username }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        String(repeating: "0", count: max(0, width - count)) + self
    }
}
