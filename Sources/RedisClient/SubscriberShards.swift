/// The bookkeeping of a ``RedisSubscriber``'s links, free of I/O so tests can drive it: which
/// channels are wanted, which shard owns each, which link each is subscribed on, and which were
/// reported lost.
///
/// A shard is the one server, or in cluster mode one master. Each has a link of its own, and a
/// channel is subscribed on the link of the shard owning its slot. A link that closes loses its
/// own channels only; they are subscribed again once their shard (or the master that took over
/// its slots) has a link, and only they are reported restored. The other links are not touched.
///
/// Each event is a mutating method returning what to do: the `SSUBSCRIBE`/`SUNSUBSCRIBE` writes,
/// the channels to report lost or restored, the waiters to serve.
struct SubscriberShards<Link: AnyObject, Waiter> {
    /// Channels to subscribe or unsubscribe on one link.
    struct Write {
        var link: Link
        var endpoint: RedisEndpoint
        var channels: [String]
    }

    /// Subscriptions and unsubscriptions to write, and the waiters they serve.
    struct Placement {
        var subscribe: [Write] = []
        var unsubscribe: [Write] = []
        /// Callers whose every channel is now written on a link.
        var served: [Waiter] = []
    }

    /// The shard each channel is written on, by the shard's number: a `RedisEndpoint` (over 60
    /// bytes) kept per channel would be memory per subscribed channel, and a node may subscribe
    /// thousands (a room's per room with local sockets).
    private struct Placements {
        /// Every shard a channel was placed on so far (a few: the masters seen).
        private var shards: [RedisEndpoint] = []
        private var numbers: [String: Int] = [:]

        var count: Int { numbers.count }

        subscript(channel: String) -> RedisEndpoint? {
            get { numbers[channel].map { shards[$0] } }
            set { numbers[channel] = newValue.map { number(of: $0) } }
        }

        mutating func removeValue(forKey channel: String) -> RedisEndpoint? {
            numbers.removeValue(forKey: channel).map { shards[$0] }
        }

        func channels(on endpoint: RedisEndpoint) -> [String] {
            guard let shard = shards.firstIndex(of: endpoint) else { return [] }
            return numbers.filter { $0.value == shard }.map(\.key)
        }

        var all: [(channel: String, endpoint: RedisEndpoint)] {
            numbers.map { ($0.key, shards[$0.value]) }
        }

        private mutating func number(of endpoint: RedisEndpoint) -> Int {
            if let shard = shards.firstIndex(of: endpoint) { return shard }
            shards.append(endpoint)
            return shards.count - 1
        }
    }

    /// Every channel the owner wants, whether or not it is subscribed now.
    private(set) var wanted: Set<String> = []
    /// The slot map; nil in standalone mode (every channel lives on `standalone`) or before the
    /// first read in cluster mode.
    private(set) var topology: ClusterTopology?
    /// The server in standalone mode.
    private let standalone: RedisEndpoint?
    /// Open links, one per shard.
    private var links: [RedisEndpoint: Link] = [:]
    /// The shard whose link each wanted channel is written on.
    private var placed = Placements()
    /// Wanted channels reported lost and not yet restored.
    private(set) var lost: Set<String> = []
    /// Callers waiting until their channels are written on a link, and those channels.
    private var waiters: [Int: (waiter: Waiter, pending: Set<String>)] = [:]

    /// - Parameter standalone: the one server, or nil in cluster mode.
    init(standalone: RedisEndpoint?) {
        self.standalone = standalone
    }

    /// The shards a link must be kept to: the server, or the masters of the slot map.
    var shards: [RedisEndpoint] {
        if let standalone { return [standalone] }
        return topology?.masters ?? []
    }

    /// The shards, those with an open link first: a slot map read asks them first, so a dead
    /// master (whose connection attempt may take the whole connect timeout) is asked last.
    var shardsLinkedFirst: [RedisEndpoint] {
        shards.filter { links[$0] != nil } + shards.filter { links[$0] == nil }
    }

    /// Every open link.
    var openLinks: [Link] { Array(links.values) }

    /// True while every wanted channel is subscribed on an open link.
    var isComplete: Bool { !links.isEmpty && placed.count == wanted.count }

    /// The shard owning `channel`'s slot, if known.
    func owner(of channel: String) -> RedisEndpoint? {
        if let standalone { return standalone }
        return topology?.master(for: HashSlot(key: channel))
    }

    // MARK: The owner's calls

    /// Adds channels to the wanted set. Returns the writes for those whose shard has a link (and
    /// that are not written on one already), and those left waiting for one.
    mutating func subscribe(_ channels: [String]) -> (writes: [Write], waiting: Set<String>) {
        wanted.formUnion(channels)
        var writes: [RedisEndpoint: Write] = [:]
        var waiting: Set<String> = []
        // One written on a link already is not written again.
        for channel in channels where placed[channel] == nil {
            guard let endpoint = owner(of: channel), let link = links[endpoint] else {
                waiting.insert(channel)
                continue
            }
            placed[channel] = endpoint
            writes[endpoint, default: Write(link: link, endpoint: endpoint, channels: [])].channels.append(channel)
        }
        return (Array(writes.values), waiting)
    }

    /// Removes channels from the wanted set; returns the writes to unsubscribe them where they are
    /// subscribed, and the waiters left with nothing to wait for.
    mutating func unsubscribe(_ channels: [String]) -> (writes: [Write], served: [Waiter]) {
        wanted.subtract(channels)
        lost.subtract(channels)
        var writes: [RedisEndpoint: Write] = [:]
        for channel in channels {
            guard let endpoint = placed.removeValue(forKey: channel), let link = links[endpoint] else { continue }
            writes[endpoint, default: Write(link: link, endpoint: endpoint, channels: [])].channels.append(channel)
        }
        return (Array(writes.values), serve(Set(channels)))
    }

    /// Registers a caller waiting until `channels` are written on a link.
    mutating func wait(_ id: Int, _ waiter: Waiter, for channels: Set<String>) {
        waiters[id] = (waiter, channels)
    }

    /// Takes waiter `id` if it is still waiting (its deadline passed).
    mutating func takeWaiter(_ id: Int) -> Waiter? {
        waiters.removeValue(forKey: id)?.waiter
    }

    /// Takes every waiter, to be failed (shutdown).
    mutating func takeAllWaiters() -> [Waiter] {
        defer { waiters.removeAll() }
        return waiters.values.map(\.waiter)
    }

    // MARK: Links

    /// The wanted channels a new link to `endpoint` subscribes before it is opened to callers.
    func channels(ownedBy endpoint: RedisEndpoint) -> [String] {
        wanted.filter { placed[$0] == nil && owner(of: $0) == endpoint }
    }

    /// A new link to `endpoint` is subscribed to `subscribed`: it is opened to callers. Returns
    /// the catch-up writes (channels wanted meanwhile, or no longer wanted) and the channels
    /// restored (reported lost before).
    mutating func opened(_ link: Link, at endpoint: RedisEndpoint, subscribed: [String]) -> (placement: Placement, restored: [String]) {
        links[endpoint] = link
        var placement = Placement()
        var confirmed: [String] = []
        var dropped: [String] = []
        for channel in subscribed {
            if wanted.contains(channel) && placed[channel] == nil && owner(of: channel) == endpoint {
                placed[channel] = endpoint
                confirmed.append(channel)
            } else {
                dropped.append(channel)
            }
        }
        if !dropped.isEmpty { placement.unsubscribe.append(Write(link: link, endpoint: endpoint, channels: dropped)) }
        placement.served = serve(Set(confirmed))
        let more = place()
        placement.subscribe = more.subscribe
        placement.served += more.served
        return (placement, restore(confirmed, on: endpoint))
    }

    /// The link to `endpoint` closed: its channels are lost (returned, to be reported).
    mutating func closed(_ link: Link, at endpoint: RedisEndpoint) -> [String] {
        guard links[endpoint] === link else { return [] }
        links[endpoint] = nil
        let dropped = placed.channels(on: endpoint)
        for channel in dropped { placed[channel] = nil }
        lost.formUnion(dropped)
        return dropped
    }

    /// Writes every wanted channel not subscribed anywhere on the link of its shard, if open.
    mutating func place() -> Placement {
        var writes: [RedisEndpoint: Write] = [:]
        var written: Set<String> = []
        for channel in wanted where placed[channel] == nil {
            guard let endpoint = owner(of: channel), let link = links[endpoint] else { continue }
            placed[channel] = endpoint
            written.insert(channel)
            writes[endpoint, default: Write(link: link, endpoint: endpoint, channels: [])].channels.append(channel)
        }
        return Placement(subscribe: Array(writes.values), served: serve(written))
    }

    /// Redis confirmed `channels` on `endpoint`'s link: returns those restored (reported lost
    /// before and still subscribed there).
    mutating func restore(_ channels: [String], on endpoint: RedisEndpoint) -> [String] {
        let restored = channels.filter { lost.contains($0) && placed[$0] == endpoint }
        lost.subtract(restored)
        return restored
    }

    // MARK: Slot map

    /// A new slot map (cluster mode). Channels subscribed on a shard that no longer owns them are
    /// unsubscribed there and lost (returned, to be reported; ``place()`` then puts them where
    /// they live). Returns the links to close: their shard is no longer a master.
    mutating func apply(_ topology: ClusterTopology) -> (unsubscribe: [Write], lost: [String], stale: [Link]) {
        self.topology = topology
        var writes: [RedisEndpoint: Write] = [:]
        var moved: [String] = []
        for (channel, endpoint) in placed.all where owner(of: channel) != endpoint {
            placed[channel] = nil
            moved.append(channel)
            if let link = links[endpoint] {
                writes[endpoint, default: Write(link: link, endpoint: endpoint, channels: [])].channels.append(channel)
            }
        }
        lost.formUnion(moved)
        let stale = links.filter { !topology.masters.contains($0.key) }.map(\.value)
        return (Array(writes.values), moved, stale)
    }

    /// Takes the waiters whose last pending channels are among `channels`.
    private mutating func serve(_ channels: Set<String>) -> [Waiter] {
        guard !channels.isEmpty, !waiters.isEmpty else { return [] }
        var served: [Waiter] = []
        for (id, entry) in waiters {
            let pending = entry.pending.subtracting(channels)
            if pending.isEmpty {
                waiters[id] = nil
                served.append(entry.waiter)
            } else if pending.count != entry.pending.count {
                waiters[id] = (entry.waiter, pending)
            }
        }
        return served
    }
}

extension SubscriberShards.Write: Sendable where Link: Sendable {}
