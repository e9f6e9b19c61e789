extension UserInspection {
    /// The human-readable form of `roomcast inspect user`.
    public var text: String {
        var text = "user \(user.username) (\(user.id))\n"
        text += TextTable.fields([
            ("display name", user.displayName ?? "(none)"),
            ("created", user.createdAt.description),
            ("badge", TextTable.count(unreadNotifications, "unread notification")),
            ("sockets", "\(connectedSockets) connected"),
        ])

        text += "\nrooms (\(rooms.count), most recently updated first)\n"
        if rooms.isEmpty {
            text += "  (none)\n"
        } else {
            var table = TextTable(
                headers: ["ROOM", "NAME", "WITH", "ELEMENTS", "UNSEEN ELEMENTS", "UNSEEN MESSAGES", "ACTIVE", "UPDATED"],
                rightAligned: [3, 4, 5]
            )
            table.rows = rooms.map { room in
                [
                    room.id.rawValue, room.name ?? "-", room.participants.filter { $0.id != user.id }.map(\.username).joined(separator: ", "),
                    String(room.elementCount), String(room.unseenElements), String(room.unseenMessages), room.isActive ? "yes" : "no",
                    room.updatedAt.description,
                ]
            }
            text += table.render()
        }

        text += "\ndevices (\(devices.count))\n"
        if devices.isEmpty {
            text += "  (none)\n"
        } else {
            var table = TextTable(headers: ["PLATFORM", "TOKEN"])
            table.rows = devices.map { [$0.platform, $0.token] }
            text += table.render()
        }
        return text
    }
}
