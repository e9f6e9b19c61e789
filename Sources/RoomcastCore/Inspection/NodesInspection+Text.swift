extension NodesInspection {
    /// The human-readable form of `roomcast inspect nodes`.
    public var text: String {
        let text = "nodes (\(nodes.count) live, \(TextTable.count(sockets, "socket")))\n"
        if nodes.isEmpty { return text + "  (none)\n" }
        var table = TextTable(headers: ["ID", "ADDRESS", "SOCKETS", "STARTED", "LAST HEARTBEAT", "EXPIRES"], rightAligned: [2])
        table.rows = nodes.map { [$0.id.rawValue, $0.address, String($0.sockets), $0.startedAt.description, $0.updatedAt.description, $0.expiresAt.description] }
        return text + table.render()
    }
}
