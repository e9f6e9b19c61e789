public import RedisClient

/// Accounts: creation with unique names, lookup by id or name.
public struct UserStore: Sendable {
    private let redis: RedisClient

    /// Creates a store over a client.
    public init(redis: RedisClient) {
        self.redis = redis
    }

    /// Creates an account. Throws `conflict` when the username is taken (case-insensitively).
    /// - Parameter passwordHash: the bcrypt hash; the store never sees the password.
    public func create(username: String, passwordHash: String, displayName: String?) async throws(RoomcastError) -> User {
        try Credentials.validate(username: username)
        let user = User(id: .random(), username: username, displayName: displayName, createdAt: .now())
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
            _ = try await redis.send(RedisCommand("HSET", fields))
            return true
        }
        guard created else { throw RoomcastError(.conflict, "username '\(username)' is taken") }
        return user
    }

    /// The account with this username and its password hash, for login.
    public func credentials(username: String) async throws(RoomcastError) -> (user: User, passwordHash: String)? {
        guard (try? Credentials.validate(username: username)) != nil else { return nil }
        return try await mappingRedisErrors { () throws(RedisError) in
            guard let id = try await redis.send(RedisCommand("GET", RedisKeys.username(username)), as: String?.self),
                let userID = UserID(id)
            else { return nil }
            let fields = try await redis.send(RedisCommand("HGETALL", RedisKeys.user(userID))).fields
            guard let user = User(fields: fields), let hash = fields["passwordHash"] else { return nil }
            return (user, hash)
        }
    }

    /// One user, or `nil` when there is none.
    public func user(_ id: UserID) async throws(RoomcastError) -> User? {
        try await users([id]).first
    }

    /// The users that exist among `ids`, in the same order.
    public func users(_ ids: [UserID]) async throws(RoomcastError) -> [User] {
        guard !ids.isEmpty else { return [] }
        let replies = try await mappingRedisErrors { () throws(RedisError) in
            try await redis.pipeline(ids.map { RedisCommand("HGETALL", RedisKeys.user($0)) })
        }
        return replies.compactMap { User(fields: $0.fields) }
    }
}

extension User {
    /// Reads a user from its hash; `nil` for a missing or damaged one.
    init?(fields: [String: String]) {
        guard let id = fields["id"].flatMap(UserID.init), let username = fields["username"],
            let created = fields["createdAt"].flatMap(Int64.init)
        else { return nil }
        self.init(id: id, username: username, displayName: fields["displayName"], createdAt: Timestamp(milliseconds: created))
    }
}
