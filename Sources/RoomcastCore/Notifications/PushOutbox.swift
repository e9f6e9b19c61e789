import NIOCore
public import RedisClient

/// The Redis Stream of one platform's push jobs and its consumer group: every gateway node's
/// worker for that platform reads from the group, so each job goes to one worker; a job stays
/// pending until a worker finishes it, and one left pending (failed send, dead node) is claimed
/// again after a back-off.
public struct PushOutbox: Sendable {
    private let redis: any RedisClientProtocol
    /// `ios` or `fcm`.
    public let platform: String
    /// The stream, ``RedisKeys/pushOutbox(for:)``.
    public let stream: String

    /// Creates the outbox of `platform`'s jobs over a client.
    public init(redis: any RedisClientProtocol, platform: String = PushToken.ios) {
        self.redis = redis
        self.platform = platform
        stream = RedisKeys.pushOutbox(for: platform)
    }

    /// Creates the consumer group (and the stream) unless they exist. Jobs enqueued before any
    /// worker ran are delivered too: the group starts at the beginning of the stream.
    public func prepare() async throws(RoomcastError) {
        do {
            _ = try await redis.send(RedisCommand("XGROUP", "CREATE", stream, RedisKeys.pushWorkersGroup, "0", "MKSTREAM"))
        } catch let error where error.message.hasPrefix("BUSYGROUP") {
            return
        } catch {
            throw RoomcastError(error)
        }
    }

    /// Up to `count` jobs no worker has had yet, now handed to `consumer`.
    public func takeNew(for consumer: String, count: Int) async throws(RoomcastError) -> [PushJob] {
        let reply = try await mappingRedisErrors { () throws(RedisError) in
            try await redis.send(
                RedisCommand(
                    "XREADGROUP", "GROUP", RedisKeys.pushWorkersGroup, consumer, "COUNT", count, "STREAMS", stream, ">"
                )
            )
        }
        // [[stream, [entry, …]]] or null when there is nothing new.
        guard case .array(let streams) = reply, case .array(let entries) = streams.first, entries.count == 2 else { return [] }
        return Self.jobs(from: entries[1], deliveries: 1)
    }

    /// Jobs pending longer than their back-off, claimed for `consumer`: sends that failed, and
    /// jobs whose worker died mid-send.
    /// - Parameters:
    ///   - waitBeforeRetry: how long a job handed out `deliveries` times must stay pending before
    ///     it is taken again.
    ///   - count: the most jobs to look at.
    public func claimOverdue(
        for consumer: String, count: Int, waitBeforeRetry: (_ deliveries: Int) -> Duration
    ) async throws(RoomcastError) -> [PushJob] {
        let shortest = waitBeforeRetry(1).wholeMilliseconds
        let pending = try await mappingRedisErrors { () throws(RedisError) in
            try await redis.send(
                RedisCommand("XPENDING", stream, RedisKeys.pushWorkersGroup, "IDLE", shortest, "-", "+", count)
            )
        }
        guard case .array(let entries) = pending else { return [] }
        var claimed: [PushJob] = []
        for entry in entries {
            // [id, consumer, idle ms, deliveries]
            guard case .array(let parts) = entry, parts.count == 4, let id = parts[0].string,
                let idle = try? Int(redisReply: parts[2]), let deliveries = try? Int(redisReply: parts[3])
            else { continue }
            let wait = waitBeforeRetry(deliveries).wholeMilliseconds
            guard idle >= wait else { continue }
            // XCLAIM re-checks the idle time: of two nodes claiming at once, one gets it.
            let reply = try await mappingRedisErrors { () throws(RedisError) in
                try await redis.send(RedisCommand("XCLAIM", stream, RedisKeys.pushWorkersGroup, consumer, wait, id))
            }
            claimed += Self.jobs(from: reply, deliveries: deliveries + 1)
        }
        return claimed
    }

    /// Called by `consumer` right before it sends `job`: whether it still holds the job. When it
    /// does, the job's idle time starts again, so the in-flight allowance of ``claimOverdue(for:count:waitBeforeRetry:)``
    /// counts from the send, however long the worker took to get there; when it does not (another
    /// worker claimed it meanwhile, or it was finished), the caller must not send it.
    public func renew(_ job: PushJob, for consumer: String) async throws(RoomcastError) -> Bool {
        try await redis.call(RoomcastFunctions.PushJobRenew(outbox: stream, job: job.id, consumer: consumer)).held
    }

    /// Finishes `job`: acknowledged and removed from the outbox; with a `failure`, also appended to
    /// the dead-letter stream with that reason.
    /// - Returns: whether this call finished it (`false`: another worker already had).
    @discardableResult
    public func finish(_ job: PushJob, failure: String? = nil) async throws(RoomcastError) -> Bool {
        try await redis.call(RoomcastFunctions.PushJobFinish(outbox: stream, job: job.id, failure: failure, attempts: job.deliveries)).finished
    }

    /// Removes `consumer` from the group when it holds no pending job (a node stopping cleanly),
    /// so the group lists live workers only.
    public func retire(_ consumer: String) async throws(RoomcastError) {
        let pending = try await mappingRedisErrors { () throws(RedisError) in
            try await redis.send(RedisCommand("XPENDING", stream, RedisKeys.pushWorkersGroup, "-", "+", 1, consumer))
        }
        guard case .array(let entries) = pending, entries.isEmpty else { return }
        _ = try await mappingRedisErrors { () throws(RedisError) in
            try await redis.send(RedisCommand("XGROUP", "DELCONSUMER", stream, RedisKeys.pushWorkersGroup, consumer))
        }
    }

    /// Jobs from `[[id, [field, value, …]], …]`; entries deleted meanwhile come back as null and are skipped.
    private static func jobs(from reply: RedisReply, deliveries: Int) -> [PushJob] {
        guard case .array(let entries) = reply else { return [] }
        return entries.compactMap { RedisStreamEntry($0).flatMap { PushJob($0, deliveries: deliveries) } }
    }
}
