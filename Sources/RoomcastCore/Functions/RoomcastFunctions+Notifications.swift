import RedisClient

extension RoomcastFunctions {
    /// `notification_create.lua`: a notification stored, counted unread and announced.
    struct NotificationCreate: RoomcastFunction, EmittingUserEvents {
        static let name = "notification_create"
        static let keys: [FunctionKey<Self>] = [
            .init("user") { RedisKeys.user($0.user) }, .init("notifications") { RedisKeys.userNotifications($0.user) },
            .init("data") { RedisKeys.userNotificationData($0.user) }, .init("unread") { RedisKeys.userUnreadNotifications($0.user) },
            .init("push_tokens") { RedisKeys.userPushTokens($0.user) }, .init("stream") { RedisKeys.userStream($0.user) },
            .init("sockets") { RedisKeys.userSockets($0.user) },
        ]
        static let arguments: [FunctionArgument<Self>] = [
            .init("notification_id") { $0.notification.rawValue }, .init("notification") { $0.json }, .init("kept") { $0.kept },
            .route, .userId,
        ]

        var user: UserID
        /// How the user\'s nodes are reached (``NodeEventRouting``).
        var routing: NodeEventRouting
        var notification: NotificationID
        /// The notification's JSON.
        var json: String
        /// Notifications kept per user.
        var kept: Int

        struct Reply: FunctionReply {
            enum Field: String, ReplyField { case unread, devices }
            /// The unread count after.
            var unread: Int
            /// Device token → its record JSON.
            var devices: [String: String]

            init(_ reply: NamedReply<Field>) throws(RedisError) {
                unread = try reply.int(.unread)
                devices = try reply.decode(.devices, as: RedisFields.self).values
            }
        }
    }

    /// `notification_read.lua`: one notification read.
    struct NotificationRead: RoomcastFunction, EmittingUserEvents {
        static let name = "notification_read"
        static let keys: [FunctionKey<Self>] = [
            .init("notifications") { RedisKeys.userNotifications($0.user) }, .init("unread") { RedisKeys.userUnreadNotifications($0.user) },
            .init("stream") { RedisKeys.userStream($0.user) }, .init("sockets") { RedisKeys.userSockets($0.user) },
        ]
        static let arguments: [FunctionArgument<Self>] = [.init("notification_id") { $0.notification.rawValue }, .route, .userId]

        var user: UserID
        /// How the user\'s nodes are reached (``NodeEventRouting``).
        var routing: NodeEventRouting
        var notification: NotificationID

        struct Reply: FunctionReply {
            enum Field: String, ReplyField { case changed, unread }
            /// The unread count after.
            var unread: Int

            init(_ reply: NamedReply<Field>) throws(RedisError) {
                unread = try reply.int(.unread)
            }
        }
    }

    /// `notification_read_all.lua`: every notification of a user read.
    struct NotificationReadAll: RoomcastFunction, EmittingUserEvents {
        static let name = "notification_read_all"
        static let keys: [FunctionKey<Self>] = [
            .init("unread") { RedisKeys.userUnreadNotifications($0.user) }, .init("stream") { RedisKeys.userStream($0.user) },
            .init("sockets") { RedisKeys.userSockets($0.user) },
        ]
        static let arguments: [FunctionArgument<Self>] = [.route, .userId]

        var user: UserID
        /// How the user\'s nodes are reached (``NodeEventRouting``).
        var routing: NodeEventRouting

        struct Reply: FunctionReply {
            enum Field: String, ReplyField { case unread }
            /// How many were unread.
            var unread: Int

            init(_ reply: NamedReply<Field>) throws(RedisError) {
                unread = try reply.int(.unread)
            }
        }
    }

    /// `push_token_claim.lua`: a device token given to a user unless another installation holds it.
    struct PushTokenClaim: RoomcastFunction, UserRequested {
        static let name = "push_token_claim"
        static let keys: [FunctionKey<Self>] = [
            .init("owner_key") { RedisKeys.pushTokenOwner($0.token) }, .init("installation_key") { RedisKeys.pushTokenInstallation($0.token) },
        ]
        static let arguments: [FunctionArgument<Self>] = [.user, .init("installation") { $0.installation }]

        var token: String
        var user: UserID
        /// SHA-256 (hex) of the registering installation's id, '' for none.
        var installation: String

        struct Reply: FunctionReply {
            enum Field: String, ReplyField { case previous }
            /// The previous owner, '' for none.
            var previous: String

            init(_ reply: NamedReply<Field>) throws(RedisError) {
                previous = try reply.string(.previous)
            }
        }
    }

    /// `owner_release.lua`: an owner record (a device token's, an email's) deleted if it still
    /// names this user.
    struct OwnerRelease: RoomcastFunction, UserRequested {
        static let name = "owner_release"
        static let keys: [FunctionKey<Self>] = [.init("owner") { $0.owner }, .optional("companion") { $0.companion }]
        static let arguments: [FunctionArgument<Self>] = [.user]

        /// `push-token:{<token>}` or `email:{<address>}`.
        var owner: String
        /// A record that goes with it (`push-token:{<token>}:installation`).
        var companion: String?
        var user: UserID

        struct Reply: FunctionReply {
            enum Field: String, ReplyField { case released }
            var released: Bool

            init(_ reply: NamedReply<Field>) throws(RedisError) {
                released = try reply.decode(.released)
            }
        }
    }

    /// `push_job_renew.lua`: a worker about to send a push job still holds it, its idle time restarted.
    struct PushJobRenew: RoomcastFunction {
        static let name = "push_job_renew"
        static let keys: [FunctionKey<Self>] = [.init("outbox") { $0.outbox }]
        static let arguments: [FunctionArgument<Self>] = [
            .init("group") { _ in RedisKeys.pushWorkersGroup }, .init("job") { $0.job }, .init("consumer") { $0.consumer },
        ]

        /// The job's outbox stream.
        var outbox: String
        /// The job's entry id.
        var job: String
        /// The worker about to send it.
        var consumer: String

        struct Reply: FunctionReply {
            enum Field: String, ReplyField { case held }
            /// The worker still holds the job: no other node claims it for the in-flight allowance.
            var held: Bool

            init(_ reply: NamedReply<Field>) throws(RedisError) {
                held = try reply.decode(.held)
            }
        }
    }

    /// `push_job_finish.lua`: a push job acknowledged, dead-lettered when it failed.
    struct PushJobFinish: RoomcastFunction {
        static let name = "push_job_finish"
        static let keys: [FunctionKey<Self>] = [.init("outbox") { $0.outbox }, .init("dead") { _ in RedisKeys.pushDeadLetters }]
        static let arguments: [FunctionArgument<Self>] = [
            .init("group") { _ in RedisKeys.pushWorkersGroup }, .init("job") { $0.job }, .init("reason") { $0.failure ?? "" },
            .init("attempts") { $0.attempts },
        ]

        /// The job's outbox stream.
        var outbox: String
        /// The job's entry id.
        var job: String
        /// Why it failed for good; nil when delivered.
        var failure: String?
        var attempts: Int

        struct Reply: FunctionReply {
            enum Field: String, ReplyField { case finished }
            /// This call finished the job (not another worker before it).
            var finished: Bool

            init(_ reply: NamedReply<Field>) throws(RedisError) {
                finished = try reply.decode(.finished)
            }
        }
    }

    /// `rate_limit_hit.lua`: one request counted against a window shared by every node.
    struct RateLimitHit: RoomcastFunction {
        static let name = "rate_limit_hit"
        static let keys: [FunctionKey<Self>] = [.init("counter") { RedisKeys.rateLimit($0.scope) }]
        static let arguments: [FunctionArgument<Self>] = [.init("limit") { $0.limit }, .milliseconds("window") { $0.window }]

        var scope: String
        /// Requests allowed per window.
        var limit: Int
        var window: Duration

        struct Reply: FunctionReply {
            enum Field: String, ReplyField { case allowed, remaining }
            var allowed: Bool
            /// Milliseconds until the window ends.
            var remaining: Int

            init(_ reply: NamedReply<Field>) throws(RedisError) {
                allowed = try reply.decode(.allowed)
                remaining = try reply.int(.remaining)
            }
        }
    }
}
