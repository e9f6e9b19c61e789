/// What `roomcast inspect nodes` shows: the live gateway nodes of the node registry.
public struct NodesInspection: Sendable, Encodable {
    /// Live nodes, oldest first.
    public var nodes: [NodeInfo]
    /// Sockets connected over all of them.
    public var sockets: Int

    /// The nodes and their total socket count.
    public init(nodes: [NodeInfo]) {
        self.nodes = nodes
        self.sockets = nodes.reduce(0) { $0 + $1.sockets }
    }
}
