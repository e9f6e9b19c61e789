public import RedisClient

/// Rooms and who is in them.
public struct RoomStore: Sendable {
    private let redis: RedisClient
    private let users: UserStore

    /// Creates a store over a client.
    public init(redis: RedisClient) {
        self.redis = redis
        self.users = UserStore(redis: redis)
    }

    /// Whether a user may use a room.
    public enum Membership: Sendable {
        case participant
        case notParticipant
        case noSuchRoom
    }

    /// Creates a new room of `creator` and `others` (always a new room, even for the same people),
    /// lists it under every participant, and tells the others with `room:created`.
    /// - Throws: `not_found` when one of `others` has no account.
    public func create(by creator: UserID, with others: [UserID], name: String?) async throws(RoomcastError) -> Room {
        var participantIDs = [creator]
        for id in others where !participantIDs.contains(id) { participantIDs.append(id) }
        let participants = try await users.users(participantIDs)
        if let missing = participantIDs.first(where: { id in !participants.contains { $0.id == id } }) {
            throw RoomcastError(.notFound, "user \(missing) not found")
        }
        let now = Timestamp.now()
        let room = Room(id: .random(), name: name, createdBy: creator, createdAt: now, updatedAt: now, participants: participants)
        try await mappingRedisErrors { () throws(RedisError) in
            _ = try await redis.evaluate(
                RoomcastScripts.roomCreate,
                keys: [RedisKeys.room(room.id), RedisKeys.roomParticipants(room.id)],
                arguments: [room.id.rawValue, name ?? "", creator.rawValue, Int(now.milliseconds)] + participantIDs.map(\.rawValue)
            )
            // Each participant's list lives in that user's slot: one command per user.
            _ = try await redis.pipeline(participantIDs.map { RedisCommand("ZADD", RedisKeys.userRooms($0), Int(now.milliseconds), room.id.rawValue) })
        }
        try await UserEvents(redis: redis).publish("room:created", RoomPayload(room: room), to: participantIDs.filter { $0 != creator })
        return room
    }

    /// The room with its participants, or `nil`.
    public func room(_ id: RoomID) async throws(RoomcastError) -> Room? {
        let replies = try await mappingRedisErrors { () throws(RedisError) in
            try await redis.pipeline([RedisCommand("HGETALL", RedisKeys.room(id)), RedisCommand("SMEMBERS", RedisKeys.roomParticipants(id))])
        }
        let fields = replies[0].fields
        guard let createdBy = fields["createdBy"].flatMap(UserID.init),
            let createdAt = fields["createdAt"].flatMap(Int64.init),
            let updatedAt = fields["updatedAt"].flatMap(Int64.init)
        else { return nil }
        let participantIDs = (try? [String](redisReply: replies[1]))?.compactMap(UserID.init).sorted() ?? []
        return Room(
            id: id,
            name: fields["name"].flatMap { $0.isEmpty ? nil : $0 },
            createdBy: createdBy,
            createdAt: Timestamp(milliseconds: createdAt),
            updatedAt: Timestamp(milliseconds: updatedAt),
            participants: try await users.users(participantIDs),
            elementCount: fields["elementCount"].flatMap(Int.init) ?? 0
        )
    }

    /// The room only if `user` takes part in it: `not_found` or `forbidden` otherwise.
    public func room(_ id: RoomID, readBy user: UserID) async throws(RoomcastError) -> Room {
        guard let room = try await room(id) else { throw RoomcastError(.notFound, "room not found") }
        guard room.participants.contains(where: { $0.id == user }) else {
            throw RoomcastError(.forbidden, "not a participant of this room")
        }
        return room
    }

    /// Whether `user` takes part in room `id`.
    public func membership(of user: UserID, in id: RoomID) async throws(RoomcastError) -> Membership {
        let replies = try await mappingRedisErrors { () throws(RedisError) in
            try await redis.pipeline([
                RedisCommand("SISMEMBER", RedisKeys.roomParticipants(id), user.rawValue),
                RedisCommand("EXISTS", RedisKeys.room(id)),
            ])
        }
        if replies[0] == .integer(1) { return .participant }
        return replies[1] == .integer(1) ? .notParticipant : .noSuchRoom
    }
}

/// `{room}`: the payload of `room:created` and `room:updated`.
struct RoomPayload: Encodable, Sendable {
    var room: Room
}
