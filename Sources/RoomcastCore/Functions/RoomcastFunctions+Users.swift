import NIOCore
import RedisClient

extension RoomcastFunctions {
    /// `user_socket_open.lua`: a new socket counted against the user's limit, the user read beside it.
    struct UserSocketOpen: RoomcastFunction, Stamped {
        static let name = "user_socket_open"
        static let keys: [FunctionKey<Self>] = [
            .init("sockets") { RedisKeys.userSockets($0.user) }, .init("stream") { RedisKeys.userStream($0.user) },
            .optional("user_key") { $0.readingUser ? RedisKeys.user($0.user) : nil },
        ]
        static let arguments: [FunctionArgument<Self>] = [
            .now, .time("expiry") { $0.expiry }, .init("limit") { $0.limit }, .init("socket") { $0.socket },
        ]

        var user: UserID
        var socket: String
        var limit: Int
        var now: Timestamp
        /// The socket's backstop.
        var expiry: Timestamp
        /// Read the user's hash in the same call (and count nothing for a user without one).
        var readingUser: Bool

        struct Reply: FunctionReply {
            enum Field: String, ReplyField {
                case outcome, offset, count, user
                var isOptional: Bool { self == .count || self == .user }
            }
            /// What became of the socket.
            enum Outcome: String {
                case counted
                case overLimit = "over_limit"
                case noUser = "no_user"
            }
            var outcome: Outcome
            /// The user's newest event.
            var offset: StreamOffset
            /// The user's fields, when read.
            var user: [String: String]?

            init(_ reply: NamedReply<Field>) throws(RedisError) {
                guard let outcome = Outcome(rawValue: try reply.string(.outcome)) else {
                    throw RedisError(.unexpectedReply, "user_socket_open answered an unknown outcome")
                }
                guard let offset = StreamOffset(try reply.string(.offset)) else {
                    throw RedisError(.unexpectedReply, "user_socket_open answered an offset that is none")
                }
                self.outcome = outcome
                self.offset = offset
                user = try reply.decodeIfPresent(.user, as: RedisFields.self)?.values
            }
        }
    }

    /// `user_sockets_reap.lua`: a dead node's sockets stop counting for a user.
    struct UserSocketsReap: RoomcastFunction {
        static let name = "user_sockets_reap"
        static let keys: [FunctionKey<Self>] = [.init("sockets") { RedisKeys.userSockets($0.user) }]
        static let arguments: [FunctionArgument<Self>] = [.init("node") { $0.node.rawValue }]

        var user: UserID
        var node: NodeID

        struct Reply: FunctionReply {
            enum Field: String, ReplyField { case removed }
            var removed: Int

            init(_ reply: NamedReply<Field>) throws(RedisError) {
                removed = try reply.int(.removed)
            }
        }
    }

    /// `user_event_publish.lua`: one per-user event appended to the user's stream and published.
    struct UserEventPublish: RoomcastFunction, EmittingUserEvents {
        static let name = "user_event_publish"
        static let keys: [FunctionKey<Self>] = [
            .init("stream") { RedisKeys.userStream($0.user) }, .init("sockets") { RedisKeys.userSockets($0.user) },
        ]
        static let arguments: [FunctionArgument<Self>] = [
            .route, .userId, .init("frame") { $0.frame }, .flag("retry") { $0.isRetry },
        ]

        var user: UserID
        /// How the user\'s nodes are reached (``NodeEventRouting``).
        var routing: NodeEventRouting
        /// The event's complete Socket.IO frame.
        var frame: ByteBuffer
        /// A try before this one failed: the frame may be in the stream already.
        var isRetry: Bool

        struct Reply: FunctionReply {
            enum Field: String, ReplyField { case offset }

            init(_ reply: NamedReply<Field>) throws(RedisError) {}
        }
    }
}
