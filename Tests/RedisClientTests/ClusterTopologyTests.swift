import NIOCore
import Testing

@testable import RedisClient

@Suite("ClusterTopology")
struct ClusterTopologyTests {
    private static func bulk(_ text: String) -> RedisReply { .bulk(ByteBuffer(string: text)) }

    /// A `CLUSTER SLOTS` reply of a 3-master cluster as redis-server 7.0 sends it, one master
    /// with a replica, one with an empty host (the answering node does not know its address).
    static let reply = RedisReply.array([
        .array([.integer(0), .integer(5460), .array([bulk("127.0.0.1"), .integer(30001), bulk("id1"), .array([])])]),
        .array([
            .integer(5461), .integer(10922),
            .array([bulk("127.0.0.1"), .integer(30002), bulk("id2"), .array([])]),
            .array([bulk("127.0.0.1"), .integer(30005), bulk("id5"), .array([])]),
        ]),
        .array([.integer(10923), .integer(16383), .array([bulk(""), .integer(30003), bulk("id3"), .array([])])]),
    ])

    @Test("parses CLUSTER SLOTS: masters, ranges, replicas ignored, empty host from the answering node")
    func parses() throws {
        let template = RedisEndpoint(host: "seed", port: 1, password: "pw")
        let topology = try ClusterTopology(clusterSlots: Self.reply, answeredBy: RedisEndpoint(host: "10.0.0.9", port: 30003), template: template)
        let first = RedisEndpoint(host: "127.0.0.1", port: 30001, password: "pw")
        let second = RedisEndpoint(host: "127.0.0.1", port: 30002, password: "pw")
        let third = RedisEndpoint(host: "10.0.0.9", port: 30003, password: "pw")
        #expect(topology.masters == [first, second, third])
        #expect(topology.coversAllSlots)
        #expect(topology.master(for: HashSlot(rawValue: 0)!) == first)
        #expect(topology.master(for: HashSlot(rawValue: 5460)!) == first)
        #expect(topology.master(for: HashSlot(rawValue: 5461)!) == second)
        #expect(topology.master(for: HashSlot(rawValue: 16383)!) == third)
        #expect(topology.slots(of: second).count == 10922 - 5461 + 1)
    }

    @Test("MOVED patches one slot; a new master is added")
    func assigns() throws {
        var topology = try ClusterTopology(clusterSlots: Self.reply, answeredBy: RedisEndpoint(), template: RedisEndpoint())
        let moved = try #require(ClusterRedirection(errorMessage: "MOVED 3999 127.0.0.1:30007", template: RedisEndpoint(password: "pw")))
        #expect(moved.kind == .moved)
        #expect(moved.endpoint == RedisEndpoint(host: "127.0.0.1", port: 30007, password: "pw"))
        topology.assign(moved.slot, to: moved.endpoint)
        #expect(topology.master(for: HashSlot(rawValue: 3999)!) == moved.endpoint)
        #expect(topology.master(for: HashSlot(rawValue: 3998)!)?.port == 30001)
        #expect(topology.masters.count == 4)
    }

    @Test("redirections: ASK, IPv6, a missing host, and other errors")
    func redirections() {
        let template = RedisEndpoint(host: "seed")
        #expect(ClusterRedirection(errorMessage: "ASK 12 [::1]:7000", template: template)?.endpoint == RedisEndpoint(host: "::1", port: 7000))
        #expect(ClusterRedirection(errorMessage: "ASK 12 [::1]:7000", template: template)?.kind == .ask)
        #expect(ClusterRedirection(errorMessage: "MOVED 12 :7000", template: template)?.endpoint == RedisEndpoint(host: "seed", port: 7000))
        #expect(ClusterRedirection(errorMessage: "MOVED 16384 a:1", template: template) == nil)
        #expect(ClusterRedirection(errorMessage: "ERR MOVED", template: template) == nil)
        #expect(ClusterRedirection(errorMessage: "TRYAGAIN Multiple keys request during rehashing of slot", template: template) == nil)
    }

    @Test("a malformed reply is refused")
    func malformed() {
        #expect(throws: RedisError.self) {
            try ClusterTopology(clusterSlots: .array([.array([.integer(0)])]), answeredBy: RedisEndpoint(), template: RedisEndpoint())
        }
        #expect(throws: RedisError.self) {
            try ClusterTopology(clusterSlots: .status("OK"), answeredBy: RedisEndpoint(), template: RedisEndpoint())
        }
    }
}
