/// What `roomcast inspect nodes` shows: the live gateway nodes of the node registry, and the
/// nodes whose lease lapsed that reapers have not finished with.
public struct NodesInspection: Sendable, Encodable {
    /// Live nodes, oldest first.
    public var nodes: [NodeInfo]
    /// Sockets connected over all of them.
    public var sockets: Int
    /// Nodes whose entries expired, still in the registry until reapers emptied their index,
    /// longest expired first.
    public var expired: [NodeRegistry.ExpiredNode]

    /// The nodes and their total socket count.
    public init(nodes: [NodeInfo], expired: [NodeRegistry.ExpiredNode] = []) {
        self.nodes = nodes
        self.sockets = nodes.reduce(0) { $0 + $1.sockets }
        self.expired = expired
    }
}
