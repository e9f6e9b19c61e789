/// A cluster's answer that a command belongs elsewhere: `MOVED` (the slot lives there now) or
/// `ASK` (during a migration, this one key is already there: send `ASKING` first).
struct ClusterRedirection: Sendable, Equatable {
    enum Kind: Sendable, Equatable {
        case moved, ask
    }

    var kind: Kind
    var slot: HashSlot
    var endpoint: RedisEndpoint

    /// Reads `MOVED <slot> <host>:<port>` or `ASK <slot> <host>:<port>`; credentials and
    /// options come from `template`.
    init?(errorMessage message: String, template: RedisEndpoint) {
        if message.hasPrefix("MOVED ") {
            kind = .moved
        } else if message.hasPrefix("ASK ") {
            kind = .ask
        } else {
            return nil
        }
        guard let (slot, endpoint) = ClusterTopology.redirection(message, template: template) else { return nil }
        self.slot = slot
        self.endpoint = endpoint
    }
}
