import Testing

@testable import RedisClient

/// The subscriber's bookkeeping driven directly: a shard's link lost loses its channels only,
/// and only they are restored.
@Suite("SubscriberShards")
struct SubscriberShardsTests {
    /// Stands in for a link; only its identity matters.
    final class FakeLink {}

    typealias Shards = SubscriberShards<FakeLink, String>

    static let a = RedisEndpoint(host: "a", port: 1)
    static let b = RedisEndpoint(host: "b", port: 2)
    static let c = RedisEndpoint(host: "c", port: 3)

    /// Slots 0-8191 on `first`, the rest on `second`.
    static func topology(_ first: RedisEndpoint, _ second: RedisEndpoint) -> ClusterTopology {
        var topology = ClusterTopology()
        for slot in 0..<HashSlot.count {
            topology.assign(HashSlot(rawValue: slot)!, to: slot < 8192 ? first : second)
        }
        return topology
    }

    /// Channels of each half of the slot map.
    static let low = (0..<40).map { "room:{\($0)}" }.filter { HashSlot(key: $0).rawValue < 8192 }
    static let high = (0..<40).map { "room:{\($0)}" }.filter { HashSlot(key: $0).rawValue >= 8192 }

    @Test("a lost link loses its own channels; the other link's stay subscribed; only the lost ones are restored")
    func lostLinkIsLocal() {
        var shards = Shards(standalone: nil)
        _ = shards.apply(Self.topology(Self.a, Self.b))
        let (writes, waiting) = shards.subscribe(Self.low + Self.high)
        #expect(writes.isEmpty && waiting == Set(Self.low + Self.high))
        shards.wait(1, "caller", for: waiting)

        let linkA = FakeLink()
        #expect(Set(shards.channels(ownedBy: Self.a)) == Set(Self.low))
        let openedA = shards.opened(linkA, at: Self.a, subscribed: Self.low)
        #expect(openedA.restored.isEmpty && openedA.placement.served.isEmpty)
        let linkB = FakeLink()
        let openedB = shards.opened(linkB, at: Self.b, subscribed: Self.high)
        #expect(openedB.placement.served == ["caller"])
        #expect(shards.isComplete)

        #expect(Set(shards.closed(linkA, at: Self.a)) == Set(Self.low))
        #expect(shards.lost == Set(Self.low))
        #expect(shards.place().subscribe.isEmpty)
        // A new channel on the live shard is written at once.
        let more = shards.subscribe(["room:{x}"].filter { HashSlot(key: $0).rawValue >= 8192 })
        #expect(more.writes.allSatisfy { $0.link === linkB } && more.waiting.isEmpty)

        let again = shards.opened(FakeLink(), at: Self.a, subscribed: shards.channels(ownedBy: Self.a))
        #expect(Set(again.restored) == Set(Self.low))
        #expect(shards.lost.isEmpty)
    }

    @Test("a failover: the dead master's channels go to the master that took over its slots, restored there")
    func failover() {
        var shards = Shards(standalone: nil)
        _ = shards.apply(Self.topology(Self.a, Self.b))
        _ = shards.subscribe(Self.low + Self.high)
        let linkA = FakeLink()
        _ = shards.opened(linkA, at: Self.a, subscribed: Self.low)
        _ = shards.opened(FakeLink(), at: Self.b, subscribed: Self.high)
        _ = shards.closed(linkA, at: Self.a)

        let applied = shards.apply(Self.topology(Self.c, Self.b))
        #expect(applied.lost.isEmpty && applied.stale.isEmpty && applied.unsubscribe.isEmpty)
        #expect(shards.shards == [Self.c, Self.b])
        #expect(Set(shards.channels(ownedBy: Self.c)) == Set(Self.low))
        #expect(Set(shards.opened(FakeLink(), at: Self.c, subscribed: Self.low).restored) == Set(Self.low))
    }

    @Test("slots moved between live masters: unsubscribed at the old one, lost, written at the new one, restored on confirmation")
    func reshard() {
        var shards = Shards(standalone: nil)
        _ = shards.apply(Self.topology(Self.a, Self.b))
        _ = shards.subscribe(Self.low + Self.high)
        let linkA = FakeLink()
        let linkB = FakeLink()
        _ = shards.opened(linkA, at: Self.a, subscribed: Self.low)
        _ = shards.opened(linkB, at: Self.b, subscribed: Self.high)

        let applied = shards.apply(Self.topology(Self.b, Self.b))
        #expect(Set(applied.lost) == Set(Self.low))
        #expect(applied.unsubscribe.count == 1 && applied.unsubscribe.first?.link === linkA)
        #expect(applied.stale.count == 1 && applied.stale.first === linkA)
        let placement = shards.place()
        #expect(placement.subscribe.count == 1 && placement.subscribe.first?.link === linkB)
        #expect(Set(shards.restore(Self.low, on: Self.b)) == Set(Self.low))
        #expect(shards.closed(linkA, at: Self.a).isEmpty)
    }

    @Test("standalone: one shard; unsubscribing serves a waiter left with nothing to wait for")
    func standalone() {
        var shards = Shards(standalone: Self.a)
        #expect(shards.shards == [Self.a])
        let (_, waiting) = shards.subscribe(["x", "y"])
        shards.wait(7, "w", for: waiting)
        #expect(shards.unsubscribe(["x", "y"]).served == ["w"])
        #expect(shards.takeWaiter(7) == nil)
        #expect(shards.wanted.isEmpty)
    }
}
