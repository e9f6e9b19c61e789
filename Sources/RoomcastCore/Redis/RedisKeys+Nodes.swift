extension RedisKeys {
    // MARK: Gateway nodes

    /// Hash: one live gateway node, `id`, `address` (the base URL other nodes reach it at),
    /// `startedAt`, `sockets` (Socket.IO sockets connected to it), `updatedAt` (epoch ms); it
    /// expires (PEXPIRE) unless the node's heartbeat refreshes it.
    public static func node(_ id: NodeID) -> String { "node:{\(id)}" }
    /// String: requests counted in the current window of one rate limit (`login:account:alice`,
    /// `login:address:127.0.0.1`, `rest:<userId>`); expires with the window.
    public static func rateLimit(_ scope: String) -> String { "ratelimit:{\(scope)}" }
    /// Sorted set: the ids of gateway nodes, scored by when they expire (epoch ms) unless they
    /// heartbeat again; expired members are pruned when it is read or written.
    public static let nodeRegistry = "nodes:{registry}"
}
