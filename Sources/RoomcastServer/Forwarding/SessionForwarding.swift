public import NIOCore
public import NIOHTTP1
public import RoomcastCore

/// Which requests belong to an Engine.IO session held by another node, and where that node is.
///
/// Long-polling needs every request of a session on the node that holds it; load balancers pin
/// them with sticky sessions. Roomcast does not ask for that: a node that gets a request of a
/// session it does not hold passes the connection's bytes on to the node that does
/// (``ForwardingHandler``), so a plain round-robin balancer works.
public struct SessionForwarding: Sendable {
    /// Header a forwarded request carries, naming the node that forwarded it: such a request is
    /// never forwarded again, so two nodes that disagree cannot pass it back and forth.
    public static let forwardedHeader = "X-Roomcast-Forwarded-By"

    /// This node's id, named in ``forwardedHeader``.
    public let nodeID: NodeID
    /// The node holding the session a request names, when it is another node; `nil` serves the
    /// request here.
    public let owner: @Sendable (HTTPRequestHead) -> NodeID?
    /// Where a node listens, or `nil` when it is not alive.
    public let locate: @Sendable (NodeID) async -> SocketAddress?
    /// The largest request body passed on (`engineio.max_payload`); a larger one gets 413.
    public let maxBodySize: Int

    /// - Parameters:
    ///   - nodeID: this node's id.
    ///   - maxBodySize: the largest request body forwarded.
    ///   - owner: the node holding a request's session, `nil` for this node or none.
    ///   - locate: a node's address.
    public init(
        nodeID: NodeID,
        maxBodySize: Int,
        owner: @escaping @Sendable (HTTPRequestHead) -> NodeID?,
        locate: @escaping @Sendable (NodeID) async -> SocketAddress?
    ) {
        self.nodeID = nodeID
        self.maxBodySize = maxBodySize
        self.owner = owner
        self.locate = locate
    }
}
