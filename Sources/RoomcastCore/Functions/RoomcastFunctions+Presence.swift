import NIOCore
import RedisClient

extension RoomcastFunctions {
    /// The keys every presence function takes first (`_presence.lua`).
    fileprivate static func presenceKeys<Function: RoomFunction>() -> [FunctionKey<Function>] {
        [.room, .participants, .presence, .stream, .channel, .reads]
    }

    /// `presence_join.lua`: a socket opens the room: membership checked, caught up, present, the
    /// user's unseen counts reset.
    struct PresenceJoin: RoomFunction, UserRequested, Stamped, EmittingRoomEvents {
        static let name = "presence_join"
        static let keys: [FunctionKey<Self>] = RoomcastFunctions.presenceKeys() + [.unseen, .zOrder, .profiles]
        static let arguments: [FunctionArgument<Self>] = [
            .now, .time("expiry") { $0.expiry }, .eventsKept, .roomId,
            .user, .init("member") { $0.member }, .init("catch_up") { $0.catchUp.argument },
            .init("most") { $0.catchUp.most }, .init("element_prefix") { RedisKeys.elementPrefix($0.room) },
        ]

        var room: RoomID
        var user: UserID
        /// `<userId>|<socketId>`.
        var member: String
        var now: Timestamp
        /// The member's backstop.
        var expiry: Timestamp
        var eventsKept: Int
        var catchUp: PresenceStore.CatchUp

        struct Reply: FunctionReply {
            enum Field: String, ReplyField {
                case activeUserIds, offset, announced, joinerFrame, wasOpen, caughtUp, entries, elements
                var isOptional: Bool { self != .activeUserIds && self != .offset }
            }
            /// The present users' ids as a JSON array.
            var activeUserIds: String
            /// The room stream's last offset.
            var offset: String
            /// The join changed who is present: the room got `room:presence`.
            var announced: Bool
            /// Otherwise the `room:presence` frame for the joiner alone.
            var joinerFrame: ByteBuffer?
            /// The room was open on another socket of the user: the join changed none of their
            /// unseen counts.
            var wasOpen: Bool
            /// What the joiner catches up with, when it asked to.
            var caughtUp: CaughtUp?

            enum CaughtUp {
                /// The events after the joiner's offset, as XRANGE gives them, up to `offset`.
                case replay(offset: String, entries: [RedisReply])
                /// The room's elements as a JSON array, current at `offset`.
                case snapshot(offset: String, elements: ByteBuffer)
            }

            init(_ reply: NamedReply<Field>) throws(RedisError) {
                activeUserIds = try reply.string(.activeUserIds)
                offset = try reply.string(.offset)
                announced = reply.has(.announced)
                joinerFrame = try reply.decodeIfPresent(.joinerFrame)
                wasOpen = reply.has(.wasOpen)
                if let current = try reply.decodeIfPresent(.caughtUp, as: String.self) {
                    if reply.has(.entries) {
                        caughtUp = .replay(offset: current, entries: try reply.decode(.entries))
                    } else {
                        caughtUp = .snapshot(offset: current, elements: try reply.bytes(.elements))
                    }
                }
            }
        }
    }

    /// `presence_leave.lua`: a socket left the room.
    struct PresenceLeave: RoomFunction, Stamped, EmittingRoomEvents {
        static let name = "presence_leave"
        static let keys: [FunctionKey<Self>] = RoomcastFunctions.presenceKeys()
        static let arguments: [FunctionArgument<Self>] = [
            .now, .eventsKept, .roomId, .init("member") { $0.member },
        ]

        var room: RoomID
        var member: String
        var now: Timestamp
        var eventsKept: Int

        struct Reply: FunctionReply {
            enum Field: String, ReplyField {
                case announced
                var isOptional: Bool { true }
            }

            init(_ reply: NamedReply<Field>) throws(RedisError) {}
        }
    }

    /// `presence_refresh.lua`: a node's members stay present for another backstop.
    struct PresenceRefresh: RoomFunction, Stamped, EmittingRoomEvents {
        static let name = "presence_refresh"
        static let keys: [FunctionKey<Self>] = RoomcastFunctions.presenceKeys()
        static let arguments: [FunctionArgument<Self>] = [
            .now, .time("expiry") { $0.expiry }, .eventsKept, .roomId,
            .flag("restoring") { $0.restoring }, .rest("members") { $0.members },
        ]

        var room: RoomID
        var members: [String]
        /// Add back the members that are gone, too.
        var restoring: Bool
        var now: Timestamp
        var expiry: Timestamp
        var eventsKept: Int

        struct Reply: FunctionReply {
            enum Field: String, ReplyField {
                case gone, announced
                var isOptional: Bool { self == .announced }
            }
            /// The members that were gone.
            var gone: [String]

            init(_ reply: NamedReply<Field>) throws(RedisError) {
                gone = try reply.decode(.gone)
            }
        }
    }

    /// `presence_reap.lua`: a dead node's members leave the room.
    struct PresenceReap: RoomFunction, Stamped, EmittingRoomEvents {
        static let name = "presence_reap"
        static let keys: [FunctionKey<Self>] = RoomcastFunctions.presenceKeys()
        static let arguments: [FunctionArgument<Self>] = [
            .now, .eventsKept, .roomId, .init("node") { $0.node.rawValue },
        ]

        var room: RoomID
        var node: NodeID
        var now: Timestamp
        var eventsKept: Int

        struct Reply: FunctionReply {
            enum Field: String, ReplyField {
                case removed, announced
                var isOptional: Bool { self == .announced }
            }
            /// How many members went.
            var removed: Int

            init(_ reply: NamedReply<Field>) throws(RedisError) {
                removed = try reply.int(.removed)
            }
        }
    }

    /// `message_send.lua`: a chat message stored, appended to the room's stream and published.
    struct MessageSend: RoomFunction, Stamped, EmittingRoomEvents {
        static let name = "message_send"
        static let isCommittedChange = true
        static let keys: [FunctionKey<Self>] = RoomcastFunctions.presenceKeys() + [
            .init("messages") { RedisKeys.roomMessages($0.room) },
            .optional("request") { f in f.request.map { RedisKeys.roomRequest(f.room, user: f.sender, operation: .messageSend, request: $0) } },
        ]
        /// The room id is in the room key and the frame's suffix is always `"}]`: neither is sent.
        static let arguments: [FunctionArgument<Self>] = [
            .now, .eventsKept, .init("sender") { $0.sender.rawValue },
            .init("message_id") { $0.message.rawValue }, .init("text") { $0.text }, .init("frame_prefix") { $0.frame.prefix },
            .init("messages_kept") { $0.messagesKept },
            // Only a retry's record needs the message's JSON.
            .rest("message") { $0.request == nil ? [] : [$0.json] },
        ]

        var room: RoomID
        var sender: UserID
        var message: MessageID
        var text: String
        /// The message's `createdAt`.
        var now: Timestamp
        /// The `message:new` frame around its offset.
        var frame: RoomEventFrame
        /// The message as client JSON, recorded for a retry (sent with a request id only).
        var json: ByteBuffer
        var eventsKept: Int
        var messagesKept: Int
        var request: RequestID?

        struct Reply: FunctionReply {
            enum Field: String, ReplyField {
                case offset, message, replayed
                var isOptional: Bool { self != .offset }
            }
            var offset: String
            /// For a replay, the message first sent, as client JSON; nil otherwise (the caller has
            /// the message it sent).
            var replayed: ByteBuffer?
            var isReplay: Bool { replayed != nil }

            init(_ reply: NamedReply<Field>) throws(RedisError) {
                offset = try reply.string(.offset)
                replayed = reply.has(.replayed) ? try reply.bytes(.message) : nil
            }
        }
    }
}
