import NIOCore
public import RedisClient

/// Rooms and who is in them.
public struct RoomStore: Sendable {
    let redis: any RedisClientProtocol
    let users: UserStore

    /// Creates a store over a client.
    public init(redis: any RedisClientProtocol) {
        self.redis = redis
        self.users = UserStore(redis: redis)
    }

    /// Whether a user may use a room.
    public enum Membership: Sendable {
        case participant
        case notParticipant
        case noSuchRoom
    }

    /// Creates a new room of `creator` and `others` (always a new room, even for the same people)
    /// and lists it under every participant. Telling the others (`room:created`, a notification)
    /// is ``RoomChanges/createRoom(by:with:name:)``'s.
    /// - Throws: `not_found` when one of `others` has no account.
    public func create(by creator: UserID, with others: [UserID], name: String?) async throws(RoomcastError) -> Room {
        var participantIDs = [creator]
        for id in others where !participantIDs.contains(id) { participantIDs.append(id) }
        let participants = try await users.users(participantIDs)
        if let missing = participantIDs.first(where: { id in !participants.contains { $0.id == id } }) {
            throw RoomcastError(.notFound, "user \(missing) not found")
        }
        let now = Timestamp.now()
        // Nobody can have a room open before it exists: it starts inactive.
        let room = Room(
            id: .random(), name: name, createdBy: creator, createdAt: now, updatedAt: now, isActive: false, participants: participants
        )
        try await mappingRedisErrors { () throws(RedisError) in
            // The participants' public profiles, for elements and hearts to show (kept current
            // by profile changes), and each participant's list, in that user's slot: one command
            // per user. Written before the room, so that nothing can fail once the room exists:
            // a failure here (a user's master failing over) is answered before
            // anything was created, and leaves at most list entries for a room that never came
            // to be, which lists leave out (``records(_:badgesFor:)`` skips missing rooms).
            let profiles = participants.flatMap { user -> [any RedisArgument] in
                [user.id.rawValue, (try? JSONCoding.encode(user)).map { String(buffer: $0) } ?? "null"]
            }
            let replies = try await redis.pipeline(
                [RedisCommand("HSET", [RedisKeys.roomProfiles(room.id)] + profiles)]
                    + participantIDs.map { RedisCommand("ZADD", RedisKeys.userRooms($0), Int(now.milliseconds), room.id.rawValue) }
            )
            for case .error(let message) in replies { throw RedisError(.reply, message) }
            _ = try await redis.run(
                RoomcastFunctions.RoomCreate(room: room.id, name: name, creator: creator, now: now, participants: participantIDs)
            )
        }
        return room
    }

    /// The room with its participants, or `nil`.
    public func room(_ id: RoomID) async throws(RoomcastError) -> Room? {
        try await rooms([id]).first
    }

    /// The rooms among `ids` that exist, in the same order, each with its participants: two
    /// round trips however many rooms (one pipeline of room reads, one of participants).
    public func rooms(_ ids: [RoomID]) async throws(RoomcastError) -> [Room] {
        try await rooms(from: try await records(ids))
    }

    /// Sets or clears (`nil`, `""` or white space only) the name of room `id` and moves its
    /// `updatedAt`. Sending the room as `room:updated {room}` to every participant's sockets is
    /// ``RoomChanges/renameRoom(_:to:by:)``'s.
    /// - Throws: `invalid_payload` for a name over ``RoomName/maximumLength`` characters,
    ///   `not_found` for an unknown room, `forbidden` when `user` is not a participant.
    public func rename(_ id: RoomID, to name: String?, by user: UserID) async throws(RoomcastError) -> Room {
        try await commitRename(id, to: name, by: user).room
    }

    /// ``rename(_:to:by:)`` answering who takes part too (the participants whose profiles could
    /// be read by no means are missing from the room, never from `participants`).
    func commitRename(_ id: RoomID, to name: String?, by user: UserID) async throws(RoomcastError) -> (room: Room, participants: [UserID]) {
        let name = try RoomName.normalized(name)
        let now = Timestamp.now()
        let renamed = try await redis.call(RoomcastFunctions.RoomRename(room: id, user: user, name: name, now: now))
        guard let record = RoomRecord(id: id, fields: renamed.fields, participants: renamed.participants, live: renamed.live) else {
            throw RoomcastError(.internalError, "room_rename answered a damaged room")
        }
        // Committed: the participants' profiles live in their own slots, which may be failing
        // over; the room keeps a copy of them in its slot, read when theirs cannot be.
        var read: Room?
        do throws(RoomcastError) {
            read = try await rooms(from: [record]).first
        } catch {
            guard error.code == .unavailable || error.code == .internalError else { throw error }
        }
        if read.map({ $0.participants.count < record.participantIDs.count }) ?? true {
            read = try await roomWithKeptProfiles(record, besides: read?.participants ?? [])
        }
        guard let room = read else { throw RoomcastError(.internalError, "renamed room vanished") }
        return (room, record.participantIDs)
    }

    /// `record`'s room with the participants' profiles `read` from their own keys, and the
    /// others' as the room keeps them (`room:{id}:profiles`, in the room's slot).
    private func roomWithKeptProfiles(_ record: RoomRecord, besides read: [User]) async throws(RoomcastError) -> Room {
        let fields = try await mappingRedisErrors { () throws(RedisError) in
            try await redis.send(RedisCommand("HGETALL", RedisKeys.roomProfiles(record.id))).fields
        }
        let kept = fields.values.compactMap { try? JSONCoding.decode(User.self, from: ByteBuffer(string: $0)) }
        return record.room(participants: record.participantIDs.compactMap { id in
            read.first { $0.id == id } ?? kept.first { $0.id == id }
        })
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

extension RoomStore {
    /// Reads the rooms among `ids` in one pipeline: each room's hash fields (`HMGET`), its
    /// participants and whether someone has it open; with `badgesFor`, that user's unseen counts.
    /// Missing rooms are left out.
    func records(_ ids: [RoomID], badgesFor reader: UserID? = nil) async throws(RoomcastError) -> [RoomRecord] {
        guard !ids.isEmpty else { return [] }
        let now = Int(Timestamp.now().milliseconds)
        var commands: [RedisCommand] = []
        for id in ids {
            commands.append(RedisCommand("HMGET", [RedisKeys.room(id)] + RoomRecord.hashFields))
            commands.append(RedisCommand("SMEMBERS", RedisKeys.roomParticipants(id)))
            // Presence members are scored by when they expire: the live ones score now or later.
            commands.append(RedisCommand("ZCOUNT", RedisKeys.roomPresence(id), now, "+inf"))
            if let reader {
                commands.append(RedisCommand("HGET", RedisKeys.roomMessageReads(id), reader.rawValue))
                commands.append(RedisCommand("HGET", RedisKeys.roomUnseenElements(id), reader.rawValue))
            }
        }
        let stride = reader == nil ? 3 : 5
        return try await mappingRedisErrors { () throws(RedisError) in
            let replies = try await redis.pipeline(commands)
            var records: [RoomRecord] = []
            records.reserveCapacity(ids.count)
            for (index, id) in ids.enumerated() {
                let base = index * stride
                let values = try [String?](redisReply: replies[base])
                var fields: [String: String] = [:]
                for (name, value) in zip(RoomRecord.hashFields, values) { fields[name] = value }
                guard
                    var record = RoomRecord(
                        id: id, fields: fields, participants: try [String](redisReply: replies[base + 1]),
                        live: try Int(redisReply: replies[base + 2])
                    )
                else { continue }
                if let reader {
                    record.badges = RoomBadges(
                        messages: record.unseenMessages(for: reader, readPosition: try Int?(redisReply: replies[base + 3])),
                        elements: max(0, try Int?(redisReply: replies[base + 4]) ?? 0)
                    )
                }
                records.append(record)
            }
            return records
        }
    }

    /// Rooms from records, with every participant's profile read in one pipeline.
    func rooms(from records: [RoomRecord]) async throws(RoomcastError) -> [Room] {
        let profiles = try await profiles(of: records)
        return records.map { $0.room(participants: $0.participantIDs.compactMap { profiles[$0] }) }
    }

    /// The profiles of everyone taking part in `records`, by id.
    func profiles(of records: [RoomRecord]) async throws(RoomcastError) -> [UserID: User] {
        var seen = Set<UserID>()
        let ids = records.flatMap(\.participantIDs).filter { seen.insert($0).inserted }
        return Dictionary(try await users.users(ids).map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
    }
}

/// `{room}`: the payload of `room:created` and `room:updated`.
struct RoomPayload: Encodable, Sendable {
    var room: Room
}
