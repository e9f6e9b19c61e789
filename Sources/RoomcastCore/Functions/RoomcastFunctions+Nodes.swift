import RedisClient

extension RoomcastFunctions {
    /// `node_heartbeat.lua`: a node's hash and its expiry, written in one step.
    struct NodeHeartbeat: RoomcastFunction {
        static let name = "node_heartbeat"
        static let keys: [FunctionKey<Self>] = [.init("node") { RedisKeys.node($0.node) }]
        static let arguments: [FunctionArgument<Self>] = [.milliseconds("ttl") { $0.ttl }, .rest("fields") { $0.fields }]

        var node: NodeID
        var ttl: Duration
        /// Field, value … of the node's hash.
        var fields: [String]

        struct Reply: FunctionReply {
            enum Field: String, ReplyField { case lapsed }
            /// The node held no lease before this beat.
            var lapsed: Bool

            init(_ reply: NamedReply<Field>) throws(RedisError) {
                lapsed = try reply.decode(.lapsed)
            }
        }
    }

    /// `node_reap_claim.lua`: a reaper's lease on the next batch of a dead node's index.
    struct NodeReapClaim: RoomcastFunction, Stamped {
        static let name = "node_reap_claim"
        static let keys: [FunctionKey<Self>] = [
            .init("node") { RedisKeys.node($0.node) }, .init("rooms_key") { RedisKeys.nodeRooms($0.node) },
            .init("users_key") { RedisKeys.nodeUsers($0.node) }, .init("claims") { RedisKeys.nodeReaping($0.node) },
        ]
        static let arguments: [FunctionArgument<Self>] = [
            .now, .milliseconds("lease") { $0.lease }, .init("batch") { $0.batch },
            .milliseconds("lifetime") { $0.lifetime },
        ]

        var node: NodeID
        var now: Timestamp
        /// How long the claim holds.
        var lease: Duration
        /// Most rooms, and most users, claimed.
        var batch: Int
        /// How long the claims key lives unless claimed again.
        var lifetime: Duration

        struct Reply: FunctionReply {
            enum Field: String, ReplyField {
                case alive, rooms, users, pending
                var isOptional: Bool { true }
            }
            /// What the claim found.
            enum Claim {
                /// The node holds its lease: nothing claimed.
                case alive
                /// Rooms and users claimed now, and claims of other reapers still held.
                case claimed(rooms: [RoomID], users: [UserID], pending: Int)
            }
            var claim: Claim

            init(_ reply: NamedReply<Field>) throws(RedisError) {
                if reply.has(.alive) {
                    claim = .alive
                    return
                }
                let rooms: [String] = try reply.decode(.rooms)
                let users: [String] = try reply.decode(.users)
                claim = .claimed(rooms: rooms.compactMap(RoomID.init), users: users.compactMap(UserID.init), pending: try reply.int(.pending))
            }
        }
    }

    /// `node_registry_drop.lua`: a fully reaped node leaves the registry unless it beat meanwhile.
    struct NodeRegistryDrop: RoomcastFunction, Stamped {
        static let name = "node_registry_drop"
        static let keys: [FunctionKey<Self>] = [.init("registry") { _ in RedisKeys.nodeRegistry }]
        static let arguments: [FunctionArgument<Self>] = [.now, .init("node") { $0.node.rawValue }]

        var node: NodeID
        var now: Timestamp

        struct Reply: FunctionReply {
            enum Field: String, ReplyField { case dropped }
            var dropped: Bool

            init(_ reply: NamedReply<Field>) throws(RedisError) {
                dropped = try reply.decode(.dropped)
            }
        }
    }
}
