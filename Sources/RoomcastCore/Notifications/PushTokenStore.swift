import NIOCore
public import RedisClient

/// The devices each user receives pushes on. A token belongs to one user at a time: when a
/// device signs in to another account, the previous account stops getting its pushes. A token
/// registered with an ``AppInstallation`` moves only through that installation's registration.
public struct PushTokenStore: Sendable {
    private let redis: any RedisClientProtocol
    /// Most devices a user keeps (`push.max_devices_per_user`): registering one more drops the
    /// least recently registered, so no account can grow Redis by registering tokens.
    public var maxDevicesPerUser: Int

    /// Creates a store over a client.
    public init(redis: any RedisClientProtocol, maxDevicesPerUser: Int = 10) {
        self.redis = redis
        self.maxDevicesPerUser = maxDevicesPerUser
    }

    /// Registers (or refreshes) `device` for `user`, taking it away from any other user.
    /// - Parameter installation: the app installation registering it; once a token is
    ///   registered with one, another user can take it only by naming the same installation.
    /// - Throws: `conflict` when the token belongs to someone else and is bound to another
    ///   installation (or to one, and this registration names none).
    public func register(_ device: PushToken, for user: UserID, installation: AppInstallation? = nil) async throws(RoomcastError) {
        let record: String
        do {
            record = String(buffer: try JSONCoding.encode(Record(platform: device.platform, updatedAt: Timestamp.now().milliseconds)))
        } catch {
            throw RoomcastError(.internalError, "could not encode the push token")
        }
        // Two slots (the token's and the user's): the claim first, so a refused one changes
        // nothing; a crash before the user's record leaves a token the worker finds stale.
        let previous = try await redis.call(
            RoomcastFunctions.PushTokenClaim(token: device.token, user: user, installation: installation?.digest ?? "")
        ).previous
        let devices = try await mappingRedisErrors { () throws(RedisError) in
            _ = try await redis.send(RedisCommand("HSET", RedisKeys.userPushTokens(user), device.token, record))
            if previous != user.rawValue, let previousUser = UserID(previous) {
                _ = try await redis.send(RedisCommand("HDEL", RedisKeys.userPushTokens(previousUser), device.token))
            }
            return try await redis.send(RedisCommand("HLEN", RedisKeys.userPushTokens(user)), as: Int.self)
        }
        if devices > maxDevicesPerUser {
            try await dropOldestDevices(of: user, keeping: maxDevicesPerUser)
        }
    }

    /// Removes the least recently registered devices of `user` past `count`.
    private func dropOldestDevices(of user: UserID, keeping count: Int) async throws(RoomcastError) {
        let reply = try await mappingRedisErrors { () throws(RedisError) in
            try await redis.send(RedisCommand("HGETALL", RedisKeys.userPushTokens(user)))
        }
        let byAge = reply.fields.map { token, json in
            (token: token, updatedAt: (try? JSONCoding.decode(Record.self, from: ByteBuffer(string: json)))?.updatedAt ?? 0)
        }.sorted { ($0.updatedAt, $0.token) < ($1.updatedAt, $1.token) }
        for stale in byAge.dropLast(count) {
            try await remove(stale.token, for: user)
        }
    }

    /// Removes `token` from `user`'s devices.
    /// - Returns: whether the user had it.
    @discardableResult
    public func remove(_ token: String, for user: UserID) async throws(RoomcastError) -> Bool {
        let token = PushToken.normalized(token)
        return try await mappingRedisErrors { () throws(RedisError) in
            let removed = try await redis.send(RedisCommand("HDEL", RedisKeys.userPushTokens(user), token))
            _ = try await redis.run(
                RoomcastFunctions.OwnerRelease(owner: RedisKeys.pushTokenOwner(token), companion: RedisKeys.pushTokenInstallation(token), user: user)
            )
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
