import Logging

/// Turns what happens in rooms into notifications for the people it concerns.
///
/// Runs after the change that caused it has been applied and acknowledged to no one yet; a
/// failure here is logged and never reported as the change's failure: a heart or a room must not
/// be applied twice because a client retried after a notification could not be stored.
struct Notifier: Sendable {
    let notifications: NotificationStore
    let logger: Logger

    /// A heart given to someone else's element notifies its creator; taking one back does nothing.
    func reactionToggled(_ toggle: ReactionToggle, by actor: User) async {
        guard toggle.action == "added", let subject = toggle.subject, subject.elementCreator != actor.id else { return }
        await create(.reaction(to: subject, by: actor), for: [subject.elementCreator])
    }

    /// A new room notifies every participant but its creator.
    func roomCreated(_ room: Room) async {
        guard let creator = room.participants.first(where: { $0.id == room.createdBy }) else { return }
        await create(.roomCreated(room, by: creator), for: room.participants.map(\.id).filter { $0 != creator.id })
    }

    private func create(_ draft: NotificationDraft, for recipients: [UserID]) async {
        for recipient in recipients {
            do {
                try await notifications.create(draft, for: recipient)
            } catch {
                logger.error(
                    "could not notify a user",
                    metadata: ["user": .string(recipient.rawValue), "notification.type": .string(draft.type), "error": .string("\(error)")]
                )
            }
        }
    }
}
