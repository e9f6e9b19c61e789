import RedisClient

/// The app's lists: the caller's rooms with badges, the people they share rooms with, and
/// who they share none with. Rooms are sorted by `updatedAt` when read, so nothing is rescored
/// on every element change.
extension RoomStore {
    /// The ids in `user`'s room list (`user:{id}:rooms`).
    public func roomIDs(of user: UserID) async throws(RoomcastError) -> [RoomID] {
        try await mappingRedisErrors { () throws(RedisError) in
            try await redis.send(RedisCommand("ZRANGE", RedisKeys.userRooms(user), 0, -1), as: [String].self)
        }.compactMap(RoomID.init)
    }

    /// `GET /api/rooms/my-rooms`: every room of `user`, with their badges, most recently
    /// updated first. Three round trips: the list, the rooms, the participants' profiles.
    public func listings(of user: UserID) async throws(RoomcastError) -> [RoomListing] {
        let records = try await records(try await roomIDs(of: user), badgesFor: user).filter { $0.participantIDs.contains(user) }
        let rooms = try await rooms(from: records)
        return zip(rooms, records).map { RoomListing(room: $0, badges: $1.badges) }.sorted { Self.newerFirst($0.room, $1.room) }
    }

    /// `GET /api/rooms/grouped-by-person`: each person `user` shares a room with, and those
    /// rooms (a group room under each of its other participants), most recently updated first;
    /// people ordered by their most recently updated room.
    public func roomsByPerson(of user: UserID) async throws(RoomcastError) -> [PersonRooms] {
        let records = try await records(try await roomIDs(of: user)).filter { $0.participantIDs.contains(user) }
        let profiles = try await profiles(of: records)
        var roomsByPerson: [UserID: [Room]] = [:]
        for record in records {
            let room = record.room(participants: [])
            for other in record.participantIDs where other != user && profiles[other] != nil {
                roomsByPerson[other, default: []].append(room)
            }
        }
        let people = roomsByPerson.compactMap { id, rooms -> (user: User, rooms: [Room])? in
            guard let profile = profiles[id] else { return nil }
            return (profile, rooms.sorted(by: Self.newerFirst))
        }
        return people.sorted { lhs, rhs in
            let (left, right) = (lhs.rooms[0], rhs.rooms[0])
            if left.updatedAt != right.updatedAt { return left.updatedAt > right.updatedAt }
            let (leftName, rightName) = (lhs.user.username.lowercased(), rhs.user.username.lowercased())
            if leftName != rightName { return leftName < rightName }
            return lhs.user.id < rhs.user.id
        }.map { PersonRooms(user: $0.user, rooms: $0.rooms.map(RoomSummary.init)) }
    }

    /// Everyone who takes part in a room with `user`, `user` excluded.
    public func partners(of user: UserID) async throws(RoomcastError) -> Set<UserID> {
        let ids = try await roomIDs(of: user)
        guard !ids.isEmpty else { return [] }
        let replies = try await mappingRedisErrors { () throws(RedisError) in
            try await redis.pipeline(ids.map { RedisCommand("SMEMBERS", RedisKeys.roomParticipants($0)) })
        }
        var partners = Set<UserID>()
        for reply in replies {
            let members = try await mappingRedisErrors { () throws(RedisError) in try [String](redisReply: reply) }.compactMap(UserID.init)
            guard members.contains(user) else { continue }
            partners.formUnion(members)
        }
        partners.remove(user)
        return partners
    }

    /// Most recently updated first; ties by id, so the order is the same on every read.
    static func newerFirst(_ lhs: Room, _ rhs: Room) -> Bool {
        lhs.updatedAt != rhs.updatedAt ? lhs.updatedAt > rhs.updatedAt : lhs.id < rhs.id
    }
}
