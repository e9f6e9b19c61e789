import NIOCore
public import RedisClient

extension UserStore {
    /// Changes `id`'s profile and returns the account as it is now.
    ///
    /// The steps span slots (the user's hash, the email index, each room's profiles), so they are
    /// ordered for a crash between any two to be harmless: a new email is claimed before the hash
    /// names it, an old one released after, and the rooms' copies follow the hash (an element or
    /// history read in between shows the old profile).
    /// - Throws: `invalid_payload`, `conflict` when the email belongs to another account,
    ///   `not_found` when there is no such account.
    public func update(_ id: UserID, with changes: ProfileChanges) async throws(RoomcastError) -> Account {
        try changes.validate()
        guard let before = try await account(id) else { throw RoomcastError(.notFound, "user not found") }
        var after = before
        after.apply(changes)
        let oldEmail = before.email.map(ProfileChanges.emailKey)
        let newEmail = after.email.map(ProfileChanges.emailKey)
        if let email = after.email, newEmail != oldEmail { try await claim(email: email, for: id) }
        let set = after.profileFields
        let cleared = ["firstName", "lastName", "email", "avatarUrl"].filter { name in !set.contains { $0.name == name } }
        try await mappingRedisErrors { () throws(RedisError) in
            // HDEL without a field is a Redis error: with every field set there is nothing to
            // clear (that was a 500; schemathesis found it).
            var commands = cleared.isEmpty ? [] : [RedisCommand("HDEL", [RedisKeys.user(id)] + cleared)]
            if !set.isEmpty { commands.append(RedisCommand("HSET", [RedisKeys.user(id)] + set.flatMap { [$0.name, $0.value] as [any RedisArgument] })) }
            for reply in try await redis.pipeline(commands) { _ = try Int(redisReply: reply) }
            if let oldEmail, oldEmail != newEmail {
                _ = try await redis.run(RoomcastFunctions.OwnerRelease(owner: RedisKeys.email(oldEmail), user: id))
            }
        }
        if after.user != before.user { try await publishProfile(after.user) }
        return after
    }

    /// Writes `user`'s public profile into every room of theirs (`room:{<roomId>}:profiles`),
    /// one command per room's slot, in one pipeline.
    func publishProfile(_ user: User) async throws(RoomcastError) {
        let json: ByteBuffer
        do {
            json = try JSONCoding.encode(user)
        } catch {
            throw RoomcastError(.internalError, "could not encode the profile")
        }
        try await mappingRedisErrors { () throws(RedisError) in
            let rooms = try await redis.send(RedisCommand("ZRANGE", RedisKeys.userRooms(user.id), 0, -1), as: [String].self)
            guard !rooms.isEmpty else { return }
            _ = try await redis.pipeline(rooms.compactMap(RoomID.init).map { RedisCommand("HSET", RedisKeys.roomProfiles($0), user.id.rawValue, json) })
        }
    }

    /// Claims `email` for `id` in the email index; a claim of `id`'s own (left by an update that
    /// stopped half-way) counts as free.
    /// - Throws: `conflict` when another account owns it.
    func claim(email: String, for id: UserID) async throws(RoomcastError) {
        let key = RedisKeys.email(email)
        let owner = try await mappingRedisErrors { () throws(RedisError) -> String? in
            let claimed = try await redis.send(RedisCommand("SET", [key, id.rawValue, "NX"]))
            guard claimed.isNull else { return id.rawValue }
            return try await redis.send(RedisCommand("GET", key), as: String?.self)
        }
        guard owner == nil || owner == id.rawValue else { throw RoomcastError(.conflict, "email is taken") }
        if owner == nil { try await claim(email: email, for: id) }
    }
}

extension Account {
    /// Applies profile changes (already validated).
    mutating func apply(_ changes: ProfileChanges) {
        func apply(_ change: ProfileChanges.Change, to value: inout String?) {
            switch change {
            case .keep: break
            case .clear: value = nil
            case .set(let text): value = text
            }
        }
        apply(changes.firstName, to: &user.firstName)
        apply(changes.lastName, to: &user.lastName)
        apply(changes.avatarUrl, to: &user.avatarUrl)
        apply(changes.email, to: &email)
    }

    /// The profile fields that are set, as user hash fields.
    var profileFields: [(name: String, value: String)] {
        [("firstName", user.firstName), ("lastName", user.lastName), ("email", email), ("avatarUrl", user.avatarUrl)]
            .compactMap { name, value in value.map { (name, $0) } }
    }
}
