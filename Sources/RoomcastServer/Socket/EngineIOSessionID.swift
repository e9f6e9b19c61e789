import RoomcastCore
import SocketIOServer

/// Engine.IO session ids name the node that holds the session: its id, then 20 random
/// characters. Any node can then tell where a poll belongs (see ``SessionForwarding``).
enum EngineIOSessionID {
    /// A new id for a session on `node`.
    static func make(on node: NodeID) -> String {
        node.rawValue + RandomID.make()
    }

    /// The node holding the session `sid`, or `nil` when `sid` is not one of ours.
    static func node(of sid: some StringProtocol) -> NodeID? {
        guard sid.utf8.count == NodeID.length + 20 else { return nil }
        return NodeID(sid.prefix(NodeID.length))
    }
}
