import Foundation
import NIOCore
import RedisClient
import RoomcastCore
import RoomcastTestSupport
import Testing

/// A user's events go to the nodes holding the user's sockets, once per node, on each node's
/// channel of the user's slot (`_emit.lua`), and to no other node.
@Suite("Per-user events routed to the nodes of the user's sockets")
struct UserEventRoutingTests {
    /// A socket id of `node`: its id, then 20 characters.
    static func socket(of node: NodeID, _ index: Int) -> String {
        node.rawValue + String(repeating: "\(index % 10)", count: 20)
    }

    @Test("an event reaches each node holding a socket of the user once, as <userId> <offset> <frame>, and no other node")
    func oncePerNode() async throws {
        try await withTestRedis { redis, server in
            let alice = try await UserStore(redis: redis).create(username: "alice", passwordHash: "h", displayName: nil)
            let (a, b, c) = (NodeID("aaaaaaaa")!, NodeID("bbbbbbbb")!, NodeID("cccccccc")!)
            // Two sockets on node a, one on node b; node c holds none of Alice's.
            for socket in [Self.socket(of: a, 1), Self.socket(of: a, 2), Self.socket(of: b, 3)] {
                _ = try await redis.send("ZADD", RedisKeys.userSockets(alice.id), "99999999999999", socket)
            }
            let routing = NodeEventRouting(isCluster: redis.configuration.isCluster)
            let channel = { @Sendable (node: NodeID) in RedisKeys.nodeEventsRoute(forUser: alice.id, routing: routing) + node.rawValue }
            // On a cluster, the channel is in the user's slot; on one server, it is the node's only one.
            #expect(HashSlot(key: channel(a)) == HashSlot(key: RedisKeys.user(alice.id)) || routing == .single)
            try await withSubscriber(server, to: [a, b, c].map(channel)) { inbox in
                let frame = ByteBuffer(string: #"42["badge:updated",{"unreadCount":7}]"#)
                try await UserEvents(redis: redis).publish(.badgeUpdated, ["unreadCount": 7], to: [alice.id])
                try await inbox.fence(redis, on: [a, b, c].map(channel))
                for node in [a, b] {
                    let received = inbox.received.filter { $0.channel == channel(node) }.map { String(buffer: $0.payload) }
                    try #require(received.count == 1, "\(node): \(received)")
                    let parts = received[0].split(separator: " ", maxSplits: 2).map(String.init)
                    #expect(parts[0] == alice.id.rawValue)
                    #expect(StreamOffset(parts[1]) != nil, "\(received[0])")
                    #expect(parts[2] == String(buffer: frame))
                }
                #expect(inbox.received.filter { $0.channel == channel(c) }.isEmpty)
            }
        }
    }

    @Test("a user with no socket anywhere has the event kept in the stream and published to no node")
    func noSockets() async throws {
        try await withTestRedis { redis, server in
            let bob = try await UserStore(redis: redis).create(username: "bob", passwordHash: "h", displayName: nil)
            let routing = NodeEventRouting(isCluster: redis.configuration.isCluster)
            let channel = RedisKeys.nodeEventsRoute(forUser: bob.id, routing: routing) + "aaaaaaaa"
            try await withSubscriber(server, to: [channel]) { inbox in
                try await UserEvents(redis: redis).publish(.badgeUpdated, ["unreadCount": 1], to: [bob.id])
                try await inbox.fence(redis, on: [channel])
                #expect(inbox.received.isEmpty)
            }
            #expect(try await redis.send("XLEN", RedisKeys.userStream(bob.id)) == .integer(1))
        }
    }
}
