import NIOCore
public import RedisClient

/// The devices each user receives pushes on. A token belongs to one user at a time: when a
/// device signs in to another account, the previous account stops getting its pushes.
public struct PushTokenStore: Sendable {
    private let redis: RedisClient

    /// Creates a store over a client.
    public init(redis: RedisClient) {
        self.redis = redis
    }

    /// Registers (or refreshes) `device` for `user`, taking it away from any other user.
    public func register(_ device: PushToken, for user: UserID) async throws(RoomcastError) {
        let record: String
        do {
            record = String(buffer: try JSONCoding.encode(Record(platform: device.platform, updatedAt: Timestamp.now().milliseconds)))
        } catch {
            throw RoomcastError(.internalError, "could not encode the push token")
        }
        try await mappingRedisErrors { () throws(RedisError) in
            // Two slots (the user's and the token's): two commands, owner last so a crash between
            // leaves at worst a token the worker finds stale.
            _ = try await redis.send(RedisCommand("HSET", RedisKeys.userPushTokens(user), device.token, record))
            let previous = try await redis.send(RedisCommand("SET", RedisKeys.pushTokenOwner(device.token), user.rawValue, "GET"))
            if let owner = previous.string, owner != user.rawValue, let previousUser = UserID(owner) {
                _ = try await redis.send(RedisCommand("HDEL", RedisKeys.userPushTokens(previousUser), device.token))
            }
        }
    }

    /// Removes `token` from `user`'s devices.
    /// - Returns: whether the user had it.
    @discardableResult
    public func remove(_ token: String, for user: UserID) async throws(RoomcastError) -> Bool {
        let token = PushToken.normalized(token)
        return try await mappingRedisErrors { () throws(RedisError) in
            let removed = try await redis.send(RedisCommand("HDEL", RedisKeys.userPushTokens(user), token))
            _ = try await redis.evaluate(RoomcastScripts.ownerRelease, keys: [RedisKeys.pushTokenOwner(token)], arguments: [user.rawValue])
            return removed == .integer(1)
        }
    }

    /// Removes a token APNs or FCM called unregistered at `unregisteredAt` (epoch ms), unless the app
    /// registered it again after that.
    /// - Returns: whether it was removed.
    @discardableResult
    public func removeUnregistered(_ token: String, for user: UserID, unregisteredAt: Int64?) async throws(RoomcastError) -> Bool {
        let token = PushToken.normalized(token)
        if let unregisteredAt {
            let reply = try await mappingRedisErrors { () throws(RedisError) in
                try await redis.send(RedisCommand("HGET", RedisKeys.userPushTokens(user), token))
            }
            if case .bulk(let json) = reply, let record = try? JSONCoding.decode(Record.self, from: json), record.updatedAt > unregisteredAt {
                return false
            }
        }
        return try await remove(token, for: user)
    }

    /// The devices of `user`.
    public func tokens(for user: UserID) async throws(RoomcastError) -> [PushToken] {
        let reply = try await mappingRedisErrors { () throws(RedisError) in
            try await redis.send(RedisCommand("HGETALL", RedisKeys.userPushTokens(user)))
        }
        return reply.fields.sorted { $0.key < $1.key }.compactMap { token, json in
            guard let record = try? JSONCoding.decode(Record.self, from: ByteBuffer(string: json)) else { return nil }
            return try? PushToken(token: token, platform: record.platform)
        }
    }

    /// The platform a stored record names, when it is one Roomcast pushes to.
    static func platform(ofRecord json: String) -> String? {
        guard let record = try? JSONCoding.decode(Record.self, from: ByteBuffer(string: json)),
            PushToken.platforms.contains(record.platform)
        else { return nil }
        return record.platform
    }

    /// What is stored per device.
    private struct Record: Codable {
        var platform: String
        var updatedAt: Int64
    }
}
