/// One gateway node as the node registry holds it (`node:{<id>}`).
public struct NodeInfo: Sendable, Hashable, Codable {
    /// The node's id.
    public var id: NodeID
    /// The base URL other nodes reach it at (`http://10.0.0.5:8080`).
    public var address: String
    /// When the node started.
    public var startedAt: Timestamp
    /// Socket.IO sockets connected to the node at its last heartbeat.
    public var sockets: Int
    /// When the node last sent a heartbeat.
    public var updatedAt: Timestamp
    /// When the entry expires unless the node sends another heartbeat.
    public var expiresAt: Timestamp

    /// Creates a node entry; ``NodeRegistry/heartbeat(_:ttl:)`` stamps `updatedAt` and `expiresAt`.
    public init(id: NodeID, address: String, startedAt: Timestamp, sockets: Int, updatedAt: Timestamp? = nil, expiresAt: Timestamp? = nil) {
        self.id = id
        self.address = address
        self.startedAt = startedAt
        self.sockets = sockets
        self.updatedAt = updatedAt ?? startedAt
        self.expiresAt = expiresAt ?? startedAt
    }

    /// The hash fields of `node:{<id>}`, as ``NodeRegistry`` writes them.
    var hashFields: [String] {
        [
            "id", id.rawValue, "address", address, "startedAt", String(startedAt.milliseconds), "sockets", String(sockets),
            "updatedAt", String(updatedAt.milliseconds),
        ]
    }

    /// Reads a node's hash (`HGETALL`); `nil` when it is gone or not a node entry.
    init?(fields: [String: String], expiresAt: Timestamp) {
        guard let id = fields["id"].flatMap({ NodeID($0) }), let address = fields["address"],
            let startedAt = fields["startedAt"].flatMap({ Int64($0) }), let sockets = fields["sockets"].flatMap({ Int($0) }),
            let updatedAt = fields["updatedAt"].flatMap({ Int64($0) })
        else { return nil }
        self.init(
            id: id, address: address, startedAt: Timestamp(milliseconds: startedAt), sockets: sockets,
            updatedAt: Timestamp(milliseconds: updatedAt), expiresAt: expiresAt
        )
    }
}
