import RedisClient

extension RoomcastFunctions {
    /// `room_create.lua`: a room and its participants, unless the id is taken.
    struct RoomCreate: RoomFunction, Stamped {
        static let name = "room_create"
        static let isCommittedChange = true
        static let keys: [FunctionKey<Self>] = [.room, .participants]
        static let arguments: [FunctionArgument<Self>] = [
            .roomId, .init("name") { $0.name ?? "" }, .init("creator") { $0.creator.rawValue }, .now,
            .rest("participants") { $0.participants.map(\.rawValue) },
        ]

        var room: RoomID
        var name: String?
        var creator: UserID
        var now: Timestamp
        /// Every participant, the creator included.
        var participants: [UserID]

        struct Reply: FunctionReply {
            enum Field: String, ReplyField { case created }

            init(_ reply: NamedReply<Field>) throws(RedisError) {}
        }
    }

    /// `room_rename.lua`: a room's name set or cleared, for participants.
    struct RoomRename: RoomFunction, UserRequested, Stamped {
        static let name = "room_rename"
        static let isCommittedChange = true
        static let keys: [FunctionKey<Self>] = [.room, .participants, .presence]
        static let arguments: [FunctionArgument<Self>] = [
            .user, .init("name") { $0.name ?? "" }, .now,
        ]

        var room: RoomID
        var user: UserID
        /// nil clears it.
        var name: String?
        var now: Timestamp

        struct Reply: FunctionReply {
            enum Field: String, ReplyField { case room, participants, live }
            /// The room hash.
            var fields: [String: String]
            var participants: [String]
            /// Unexpired presence members.
            var live: Int

            init(_ reply: NamedReply<Field>) throws(RedisError) {
                fields = try reply.decode(.room, as: RedisFields.self).values
                participants = try reply.decode(.participants)
                live = try reply.int(.live)
            }
        }
    }
}
