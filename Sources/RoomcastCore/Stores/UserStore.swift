public import RedisClient

/// Accounts: creation with unique names, lookup by id or name, paging through all of them.
public struct UserStore: Sendable {
    let redis: any RedisClientProtocol

    /// Creates a store over a client.
    public init(redis: any RedisClientProtocol) {
        self.redis = redis
    }

    /// Creates an account and returns its public profile (see ``createAccount(username:passwordHash:displayName:profile:)``).
    public func create(username: String, passwordHash: String, displayName: String?) async throws(RoomcastError) -> User {
        try await createAccount(username: username, passwordHash: passwordHash, displayName: displayName).user
    }

    /// Creates an account. Throws `conflict` when the username or the email is taken
    /// (case-insensitively).
    /// - Parameters:
    ///   - passwordHash: the bcrypt hash; the store never sees the password.
    ///   - profile: the profile fields to set (validated by the caller).
    public func createAccount(
        username: String, passwordHash: String, displayName: String?, profile: ProfileChanges = ProfileChanges()
    ) async throws(RoomcastError) -> Account {
        try Credentials.validate(username: username)
        var user = User(id: .random(), username: username, displayName: displayName, createdAt: .now())
        var account = Account(user: user, email: nil)
        account.apply(profile)
        user = account.user
        if let email = account.email { try await claim(email: email, for: user.id) }
        let created = try await mappingRedisErrors { () throws(RedisError) in
            // The name is claimed first: a crash between the two steps leaves a reserved name
            // pointing at no account, never two accounts with one name.
            let claimed = try await redis.send(RedisCommand("SET", [RedisKeys.username(username), user.id.rawValue, "NX"]))
            guard !claimed.isNull else { return false }
            var fields: [any RedisArgument] = [
                RedisKeys.user(user.id), "id", user.id.rawValue, "username", username,
                "passwordHash", passwordHash, "createdAt", Int(user.createdAt.milliseconds),
            ]
            if let displayName { fields += ["displayName", displayName] }
            fields += account.profileFields.flatMap { [$0.name, $0.value] as [any RedisArgument] }
            // The index entry follows the hash in the same write, so a listed id has an account.
            let replies = try await redis.pipeline([
                RedisCommand("HSET", fields),
                RedisCommand("ZADD", RedisKeys.allUsers, Int(user.createdAt.milliseconds), user.id.rawValue),
            ])
            for reply in replies { _ = try Int(redisReply: reply) }
            return true
        }
        guard created else {
            // The email claimed for this attempt goes back.
            if let email = account.email {
                _ = try? await redis.call(RoomcastFunctions.OwnerRelease(owner: RedisKeys.email(email), user: user.id))
            }
            throw RoomcastError(.conflict, "username '\(username)' is taken")
        }
        return account
    }

    /// The account with this username and its password hash, for login.
    public func credentials(username: String) async throws(RoomcastError) -> (account: Account, passwordHash: String)? {
        guard (try? Credentials.validate(username: username)) != nil else { return nil }
        return try await mappingRedisErrors { () throws(RedisError) in
            guard let id = try await redis.send(RedisCommand("GET", RedisKeys.username(username)), as: String?.self),
                let userID = UserID(id)
            else { return nil }
            let fields = try await redis.send(RedisCommand("HGETALL", RedisKeys.user(userID))).fields
            guard let account = Account(fields: fields), let hash = fields["passwordHash"] else { return nil }
            return (account, hash)
        }
    }

    /// One user, or `nil` when there is none.
    public func user(_ id: UserID) async throws(RoomcastError) -> User? {
        try await users([id]).first
    }

    /// The users that exist among `ids`, in the same order.
    public func users(_ ids: [UserID]) async throws(RoomcastError) -> [User] {
        try await accounts(ids).map(\.user)
    }

    /// The account (profile and email) of `id`, or `nil` when there is none.
    public func account(_ id: UserID) async throws(RoomcastError) -> Account? {
        try await accounts([id]).first
    }

    /// The accounts that exist among `ids`, in the same order.
    public func accounts(_ ids: [UserID]) async throws(RoomcastError) -> [Account] {
        guard !ids.isEmpty else { return [] }
        let replies = try await mappingRedisErrors { () throws(RedisError) in
            let replies = try await redis.pipeline(ids.map { RedisCommand("HGETALL", RedisKeys.user($0)) })
            // An error reply (a slot whose master is failing over) is not a missing account.
            for case .error(let message) in replies { throw RedisError(.reply, message) }
            return replies
        }
        return replies.compactMap { Account(fields: $0.fields) }
    }

    /// A page of the index of every user, oldest account first, leaving out `excluded`.
    ///
    /// Walks `users` by rank from the cursor's position, skipping excluded ids, until `limit`
    /// users and one more (to know whether a next page exists) are found or the index ends.
    /// - Parameters:
    ///   - cursor: the previous page's `nextCursor`; `nil` for the first page.
    ///   - limit: the most users on the page (at least 1).
    ///   - excluded: ids that never appear (the caller, the people they share rooms with).
    public func page(after cursor: UserCursor?, limit: Int, excluding excluded: Set<UserID>) async throws(RoomcastError) -> UserPage {
        let limit = max(limit, 1)
        // Enough for a whole page in one read unless ids are missing or raced in.
        let batch = min(limit + 1 + excluded.count, 1000)
        var found: [UserCursor] = []
        var last = cursor
        try await mappingRedisErrors { () throws(RedisError) in
            var start = 0
            if let cursor {
                // Users created strictly before the cursor's millisecond; those of the same
                // millisecond up to the cursor's id are skipped below.
                start = try await redis.send(RedisCommand("ZCOUNT", RedisKeys.allUsers, "-inf", "(\(cursor.createdAt)"), as: Int.self)
            }
            while found.count <= limit {
                let flat = try await redis.send(
                    RedisCommand("ZRANGE", RedisKeys.allUsers, start, start + batch - 1, "WITHSCORES"), as: [String].self
                )
                var index = 0
                while index + 1 < flat.count, found.count <= limit {
                    defer { index += 2 }
                    guard let id = UserID(flat[index]), let score = Double(flat[index + 1]).flatMap({ Int64(exactly: $0) }) else { continue }
                    // Ranks shift when someone registers with an earlier time than the last seen
                    // (clocks of nodes differ): what is not past the last position is a repeat.
                    if let last, !last.precedes(score: score, id: id) { continue }
                    last = UserCursor(createdAt: score, id: id)
                    if !excluded.contains(id) { found.append(UserCursor(createdAt: score, id: id)) }
                }
                if flat.count < batch * 2 { break }
                start += batch
            }
        }
        let nextCursor = found.count > limit ? found[limit - 1] : nil
        return UserPage(accounts: try await accounts(found.prefix(limit).map(\.id)), nextCursor: nextCursor)
    }
}

extension User {
    /// Reads a user from its hash; `nil` for a missing or damaged one.
    init?(fields: [String: String]) {
        guard let id = fields["id"].flatMap(UserID.init), let username = fields["username"],
            let created = fields["createdAt"].flatMap(Int64.init)
        else { return nil }
        self.init(
            id: id, username: username, displayName: fields["displayName"], firstName: fields["firstName"],
            lastName: fields["lastName"], avatarUrl: fields["avatarUrl"], createdAt: Timestamp(milliseconds: created)
        )
    }
}

extension Account {
    /// Reads an account from its user hash; `nil` for a missing or damaged one.
    init?(fields: [String: String]) {
        guard let user = User(fields: fields) else { return nil }
        self.init(user: user, email: fields["email"])
    }
}
