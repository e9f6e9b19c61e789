public import RedisClient
import NIOCore
import SocketIO

/// Reads rooms, users and nodes straight from Redis for `roomcast inspect`: through the stores
/// wherever one reads what is wanted, plus a few direct reads of the keys in docs/internals/redis-keys.md.
///
/// Reads only.
public struct Inspector: Sendable {
    private let redis: any RedisClientProtocol
    /// Latest room events shown by ``room(_:)``.
    public var recentEvents = 10

    /// Creates an inspector over a client.
    public init(redis: any RedisClientProtocol) {
        self.redis = redis
    }

    /// One room with its participants, canvas, presence and stream.
    /// - Throws: `not_found` for an unknown room.
    public func room(_ id: RoomID) async throws(RoomcastError) -> RoomInspection {
        guard let room = try await RoomStore(redis: redis).room(id) else {
            throw RoomcastError(.notFound, "no room with id '\(id)'")
        }
        // The snapshot and reaction reads are for a participant; what differs per viewer
        // (`hasReacted`) is not shown.
        var elements: [RoomInspection.ElementEntry] = []
        if let viewer = room.participants.first?.id {
            let reactions = ReactionStore(redis: redis)
            for element in try await ElementStore(redis: redis).snapshot(of: id, for: viewer).elements {
                let count = element.reactions?.count ?? 0
                let hearts = count == 0 ? [] : try await reactions.reactions(on: element.id, in: id, for: viewer).reactions
                elements.append(
                    RoomInspection.ElementEntry(
                        id: element.id, type: element.type, zIndex: element.zIndex, createdBy: element.createdBy,
                        creator: element.creator?.username, createdAt: element.createdAt, reactionCount: count,
                        reactions: hearts.map { RoomInspection.Heart(userId: $0.userId, username: $0.user.username, createdAt: $0.createdAt) }
                    )
                )
            }
        }
        let present = try await PresenceStore(redis: redis).presentUsers(in: id)
        let now = Int(Timestamp.now().milliseconds)
        let replies = try await mappingRedisErrors { () throws(RedisError) in
            try await redis.pipeline([
                RedisCommand("HGETALL", RedisKeys.roomUnseenElements(id)),
                RedisCommand("HGETALL", RedisKeys.roomMessageReads(id)),
                RedisCommand("ZCOUNT", RedisKeys.roomPresence(id), now, "+inf"),
                RedisCommand("XLEN", RedisKeys.roomStream(id)),
                RedisCommand("XRANGE", RedisKeys.roomStream(id), "-", "+", "COUNT", 1),
                RedisCommand("XLEN", RedisKeys.roomMessages(id)),
                RedisCommand("HMGET", RedisKeys.room(id), "messageSeq", "presence"),
            ])
        }
        let (unseenElements, messageReads) = (replies[0].fields, replies[1].fields)
        // Unseen messages exactly as the user's room list counts them (RoomRecord).
        let counts = (try? [String?](redisReply: replies[6])) ?? []
        let messageSequence = counts.first.flatMap { $0 }.flatMap { Int($0) } ?? 0
        let announcedPresence = counts.dropFirst().first.flatMap { $0 } ?? "[]"
        let recent = try await RoomEventLog(redis: redis).latest(recentEvents, of: id)
        return RoomInspection(
            id: room.id, name: room.name, createdBy: room.createdBy, createdAt: room.createdAt, updatedAt: room.updatedAt,
            elementCount: room.elementCount, messageCount: Self.integer(replies[5]),
            participants: room.participants.map { user in
                RoomInspection.Participant(
                    id: user.id, username: user.username, displayName: user.displayName,
                    unseenElements: unseenElements[user.id.rawValue].flatMap { Int($0) } ?? 0,
                    unseenMessages: UnseenMessages.count(
                        for: user.id, sequence: messageSequence, readPosition: messageReads[user.id.rawValue].flatMap { Int($0) },
                        announcedPresence: announcedPresence
                    ),
                    present: present.contains(user.id)
                )
            },
            elements: elements,
            presence: RoomInspection.Presence(isActive: !present.isEmpty, userIds: present, sockets: Self.integer(replies[2])),
            stream: RoomInspection.Stream(
                length: Self.integer(replies[3]), firstOffset: RedisStreamEntry(Self.first(replies[4])).map { String(buffer: $0.id) },
                lastOffset: recent.first?.offset.map(String.init),
                recent: recent.map { RoomInspection.Event(offset: $0.offset.map(String.init) ?? "-", event: Self.eventName(of: $0.frame)) }
            )
        )
    }

    /// One user, by id or by username (an id is tried first).
    /// - Throws: `not_found` when neither names a user.
    public func user(_ reference: String) async throws(RoomcastError) -> UserInspection {
        let users = UserStore(redis: redis)
        var found: User?
        if let id = UserID(reference) {
            found = try await users.user(id)
        }
        if found == nil {
            found = try await users.credentials(username: reference)?.account.user
        }
        guard let user = found else { throw RoomcastError(.notFound, "no user with id or username '\(reference)'") }
        let listings = try await RoomStore(redis: redis).listings(of: user.id)
        let unread = try await NotificationStore(redis: redis).unreadCount(for: user.id)
        let devices = try await PushTokenStore(redis: redis).tokens(for: user.id)
        let now = Int(Timestamp.now().milliseconds)
        let sockets = try await mappingRedisErrors { () throws(RedisError) in
            try await redis.send(RedisCommand("ZCOUNT", RedisKeys.userSockets(user.id), now, "+inf"), as: Int.self)
        }
        return UserInspection(
            user: user, unreadNotifications: unread, connectedSockets: sockets,
            rooms: listings.map { listing in
                UserInspection.RoomEntry(
                    id: listing.room.id, name: listing.room.name, participants: listing.room.participants,
                    elementCount: listing.room.elementCount, unseenElements: listing.badges.elements,
                    unseenMessages: listing.badges.messages, isActive: listing.room.isActive, updatedAt: listing.room.updatedAt
                )
            },
            devices: devices
        )
    }

    /// The live gateway nodes, and the expired ones reapers have not finished with.
    public func nodes() async throws(RoomcastError) -> NodesInspection {
        let registry = NodeRegistry(redis: redis)
        return NodesInspection(nodes: try await registry.liveNodes(), expired: try await registry.expiredNodes())
    }

    /// The event name of a stream frame (`42["element:created",{...}]`); `?` if it has none.
    static func eventName(of frame: ByteBuffer) -> String {
        // The first byte is the Engine.IO packet type (4, message); the Socket.IO packet follows.
        guard frame.readableBytes > 1, let body = frame.getSlice(at: frame.readerIndex + 1, length: frame.readableBytes - 1),
            let packet = try? SocketIOPacket(decoding: body)
        else { return "?" }
        return packet.eventName ?? "?"
    }

    private static func integer(_ reply: RedisReply) -> Int { (try? Int(redisReply: reply)) ?? 0 }

    private static func first(_ reply: RedisReply) -> RedisReply {
        guard case .array(let entries) = reply, let first = entries.first else { return .null }
        return first
    }
}
