extension RoomInspection {
    /// The human-readable form of `roomcast inspect room`.
    public var text: String {
        let names = Dictionary(participants.map { ($0.id, $0.username) }, uniquingKeysWith: { first, _ in first })
        let presentNames = presence.userIds.map { names[$0] ?? $0.rawValue }.joined(separator: ", ")
        var text = "room \(id)\n"
        text += TextTable.fields([
            ("name", name ?? "(none)"),
            ("created", "\(createdAt) by \(names[createdBy].map { "\($0) (\(createdBy))" } ?? createdBy.rawValue)"),
            ("updated", updatedAt.description),
            ("elements", String(elementCount)),
            ("messages", String(messageCount)),
            ("presence", presence.isActive ? "\(presentNames) (\(TextTable.count(presence.sockets, "socket")))" : "nobody has it open"),
        ])

        text += "\nparticipants (\(participants.count))\n"
        var people = TextTable(headers: ["USERNAME", "ID", "UNSEEN ELEMENTS", "UNSEEN MESSAGES", "PRESENT"], rightAligned: [2, 3])
        people.rows = participants.map { [$0.username, $0.id.rawValue, String($0.unseenElements), String($0.unseenMessages), $0.present ? "yes" : "no"] }
        text += people.render()

        text += "\nelements (\(elements.count), bottom first)\n"
        if elements.isEmpty {
            text += "  (none)\n"
        } else {
            var canvas = TextTable(headers: ["Z", "ID", "TYPE", "CREATED BY", "CREATED AT", "HEARTS", "FROM"], rightAligned: [0, 5])
            canvas.rows = elements.map { element in
                [
                    String(element.zIndex), element.id.rawValue, element.type, element.creator ?? element.createdBy.rawValue,
                    element.createdAt.description, String(element.reactionCount), element.reactions.map(\.username).joined(separator: ", "),
                ]
            }
            text += canvas.render()
        }

        text += "\nstream (\(TextTable.count(stream.length, "event")) kept"
        if let first = stream.firstOffset, let last = stream.lastOffset {
            text += ", offsets \(first) to \(last)"
        }
        text += ")\n"
        if !stream.recent.isEmpty {
            var events = TextTable(headers: ["OFFSET", "EVENT"])
            events.rows = stream.recent.map { [$0.offset, $0.event] }
            text += events.render()
        }
        return text
    }
}
