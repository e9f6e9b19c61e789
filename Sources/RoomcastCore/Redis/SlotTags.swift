import RedisClient

/// One short hash tag per Redis Cluster slot: `tag(of: slot)` hashes to `slot`.
///
/// A node's per-user event channels (``RedisKeys/nodeEvents(_:slotTag:)``) are one per slot, so
/// that a function running on a user's slot publishes to a channel of that same slot: Redis
/// Cluster keeps a function's keys and sharded channels on one slot, and a slot's channels move
/// with it when it migrates. The tags are the first base-36 numbers that hash to each slot, the
/// same on every node.
public enum SlotTags {
    /// The tag of each slot, by slot number.
    public static let all: [String] = {
        var tags = [String?](repeating: nil, count: HashSlot.count)
        var found = 0
        var number = 0
        while found < HashSlot.count {
            let tag = String(number, radix: 36)
            let slot = Int(HashSlot(key: tag).rawValue)
            if tags[slot] == nil {
                tags[slot] = tag
                found += 1
            }
            number += 1
        }
        return tags.map { $0! }
    }()

    /// The tag that hashes to `slot`.
    static func tag(of slot: HashSlot) -> String {
        all[Int(slot.rawValue)]
    }
}

/// Which of a node's channels of per-user events carries a user's events
/// (``RedisKeys/nodeEvents(_:slotTag:)``).
public enum NodeEventRouting: Sendable, Hashable {
    /// A Redis Cluster: one channel per slot, the user's slot's, so that the function emitting the
    /// event (on the user's slot) publishes within it, and the channel moves with the slot.
    case perSlot
    /// One server: one channel per node, that of slot 0's tag, for every user.
    case single

    /// The routing of a Redis Cluster, or of one server.
    public init(isCluster: Bool) {
        self = isCluster ? .perSlot : .single
    }

    /// The routing of the deployment `configuration` reaches.
    init(_ configuration: RedisConfiguration) {
        self.init(isCluster: configuration.isCluster)
    }

    /// The tags of a node's channels.
    public var slotTags: [String] {
        switch self {
        case .perSlot: SlotTags.all
        case .single: [SlotTags.all[0]]
        }
    }

    /// The tag of the channel of `user`'s events.
    public func slotTag(forUser user: UserID) -> String {
        switch self {
        case .perSlot: SlotTags.tag(of: HashSlot(key: RedisKeys.user(user)))
        case .single: SlotTags.all[0]
        }
    }
}
