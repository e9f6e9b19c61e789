import RedisClient
import RoomcastCore
import Testing

@Suite("RedisKeys")
struct RedisKeysTests {
    /// The Redis Cluster hash tag of a key: the text between the first `{` and the next `}`.
    static func hashTag(_ key: String) -> Substring? {
        guard let open = key.firstIndex(of: "{") else { return nil }
        let rest = key[key.index(after: open)...]
        guard let close = rest.firstIndex(of: "}"), close > rest.startIndex else { return nil }
        return rest[..<close]
    }

    @Test("every key and channel of a room carries the room id as its hash tag")
    func roomKeysShareTag() throws {
        let id = try #require(RoomID("room_42-x"))
        let keys = [
            RedisKeys.room(id), RedisKeys.roomParticipants(id), RedisKeys.roomMessages(id),
            RedisKeys.roomStream(id), RedisKeys.roomChannel(id),
        ]
        for key in keys { #expect(Self.hashTag(key) == "room_42-x", "\(key)") }
        #expect(Set(keys).count == keys.count)
    }

    @Test("every key and channel of a user carries the user id as its hash tag")
    func userKeysShareTag() throws {
        let id = try #require(UserID("u-7"))
        let keys = [RedisKeys.user(id), RedisKeys.userRooms(id), RedisKeys.userChannel(id)]
        for key in keys { #expect(Self.hashTag(key) == "u-7", "\(key)") }
        #expect(Set(keys).count == keys.count)
    }

    @Test("every slot has a tag that hashes to it; on a cluster a user's node event channels live on the user's slot, on one server there is one per node")
    func slotTags() throws {
        #expect(SlotTags.all.count == HashSlot.count)
        for (slot, tag) in SlotTags.all.enumerated() {
            #expect(Int(HashSlot(key: tag).rawValue) == slot, "\(tag)")
        }
        let node = try #require(NodeID("n0den0de"))
        for raw in ["u-7", "alice", "0123456789abcdef0123456789abcdef"] {
            let user = try #require(UserID(raw))
            let channel = RedisKeys.nodeEventsRoute(forUser: user, routing: .perSlot) + node.rawValue
            #expect(HashSlot(key: channel) == HashSlot(key: RedisKeys.user(user)), "\(channel)")
            #expect(channel.hasPrefix("node-events:{") && channel.hasSuffix("}:n0den0de"))
            // On one server, one channel per node.
            #expect(RedisKeys.nodeEventsRoute(forUser: user, routing: .single) + node.rawValue == RedisKeys.nodeEvents(node, slotTag: SlotTags.all[0]))
        }
        let channels = Set(NodeEventRouting.perSlot.slotTags.map { RedisKeys.nodeEvents(node, slotTag: $0) })
        #expect(channels.count == HashSlot.count)
        #expect(NodeEventRouting.single.slotTags.count == 1)
    }

    @Test("names are exactly as documented")
    func exactNames() throws {
        let room = try #require(RoomID("r1"))
        let user = try #require(UserID("u1"))
        #expect(RedisKeys.room(room) == "room:{r1}")
        #expect(RedisKeys.roomParticipants(room) == "room:{r1}:participants")
        #expect(RedisKeys.roomMessages(room) == "room:{r1}:messages")
        #expect(RedisKeys.roomStream(room) == "room:{r1}:stream")
        #expect(RedisKeys.roomChannel(room) == "room:{r1}:events")
        #expect(RedisKeys.user(user) == "user:{u1}")
        #expect(RedisKeys.userRooms(user) == "user:{u1}:rooms")
        #expect(RedisKeys.userChannel(user) == "user:{u1}:events")
    }

    @Test("a username key is case-insensitive and tagged by the lowercased name")
    func usernameKey() {
        #expect(RedisKeys.username("Alice.B") == "username:{alice.b}")
        #expect(RedisKeys.username("ALICE.b") == RedisKeys.username("alice.B"))
        #expect(Self.hashTag(RedisKeys.username("Bob_1")) == "bob_1")
    }

    @Test("a random id gives the same tag to all its keys and differs from another id's")
    func randomIDs() {
        let a = RoomID.random()
        let b = RoomID.random()
        #expect(Self.hashTag(RedisKeys.roomStream(a)) == Self.hashTag(RedisKeys.roomChannel(a)))
        #expect(Self.hashTag(RedisKeys.roomStream(a)) != Self.hashTag(RedisKeys.roomStream(b)))
    }
}
