extension NodesInspection {
    /// The human-readable form of `roomcast inspect nodes`.
    public var text: String {
        var text = "nodes (\(nodes.count) live, \(TextTable.count(sockets, "socket")))\n"
        if nodes.isEmpty {
            text += "  (none)\n"
        } else {
            var table = TextTable(headers: ["ID", "ADDRESS", "SOCKETS", "STARTED", "LAST HEARTBEAT", "EXPIRES"], rightAligned: [2])
            table.rows = nodes.map { [$0.id.rawValue, $0.address, String($0.sockets), $0.startedAt.description, $0.updatedAt.description, $0.expiresAt.description] }
            text += table.render()
        }
        guard !expired.isEmpty else { return text }
        // A stopped node that left its members to reapers is scored 0: it expired when it stopped.
        text += "\nexpired, to be reaped (\(expired.count))\n"
        var table = TextTable(headers: ["ID", "EXPIRED", "ROOMS", "USERS", "CLAIMED"], rightAligned: [2, 3, 4])
        table.rows = expired.map { node in
            [node.id.rawValue, node.expiredAt.milliseconds == 0 ? "(stopped)" : node.expiredAt.description, String(node.rooms), String(node.users), String(node.claimed)]
        }
        return text + table.render()
    }
}
