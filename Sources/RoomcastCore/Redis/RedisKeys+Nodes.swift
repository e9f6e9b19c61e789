extension RedisKeys {
    // MARK: Gateway nodes

    /// Hash: one live gateway node, `id`, `address` (the base URL other nodes reach it at),
    /// `startedAt`, `sockets` (Socket.IO sockets connected to it), `updatedAt` (epoch ms); written
    /// with its expiry in one step (`node_heartbeat.lua`): the node's lease, which lapses unless
    /// its heartbeat renews it. A hash without an expiry holds no lease.
    public static func node(_ id: NodeID) -> String { "node:{\(id)}" }
    /// Set: the rooms where node `id` put presence members (written once per room while the node
    /// holds it; stale entries are harmless): what the reaper visits when the node dies.
    public static func nodeRooms(_ id: NodeID) -> String { "node:{\(id)}:rooms" }
    /// Set: the users whose sockets node `id` counts in `user:{<userId>}:sockets`, likewise.
    public static func nodeUsers(_ id: NodeID) -> String { "node:{\(id)}:users" }
    /// Sorted set: the entries of a dead node's index that reapers have claimed and not yet
    /// released, `room:<roomId>` and `user:<userId>`, scored by when each claim lapses (epoch
    /// ms): a reaper that dies mid-batch leaves its entries here for the next one.
    public static func nodeReaping(_ id: NodeID) -> String { "node:{\(id)}:reaping" }
    /// String: requests counted in the current window of one rate limit (`login:account:alice`,
    /// `login:address:127.0.0.1`, `rest:<userId>`); expires with the window.
    public static func rateLimit(_ scope: String) -> String { "ratelimit:{\(scope)}" }
    /// Sorted set: the ids of gateway nodes, scored by when they expire (epoch ms) unless they
    /// heartbeat again; an expired id stays until a reaper emptied its node's index
    /// (``nodeRooms(_:)``, ``nodeUsers(_:)``).
    public static let nodeRegistry = "nodes:{registry}"
}
