import RedisClient

/// Reads a stream back after an offset, for a node filling the gap its pub/sub link left, and
/// tells when that cannot be done whole.
enum StreamBackfill {
    /// The entries of stream `key` after `offset`, oldest first; `nil` when the stream may no
    /// longer hold every one of them (see ``holdsEverything(after:info:)``) or there are more than
    /// `limit`. A stream that does not exist holds nothing missed.
    static func entries(of key: String, after offset: StreamOffset, limit: Int, redis: any RedisClientProtocol) async throws(RoomcastError) -> [RedisReply]? {
        let replies = try await mappingRedisErrors { () throws(RedisError) in
            let replies = try await redis.pipeline([
                RedisCommand("XRANGE", key, "(\(offset)", "+", "COUNT", limit + 1),
                RedisCommand("XINFO", "STREAM", key),
            ])
            if case .error(let message) = replies[0] { throw RedisError(.reply, message) }
            return replies
        }
        guard case .array(let entries) = replies[0], !entries.isEmpty else { return [] }
        guard entries.count <= limit else { return nil }
        // The stream holds entries, so it exists: anything but its fields is a Redis failure.
        guard case .array(let info) = replies[1] else {
            if case .error(let message) = replies[1] { throw RoomcastError(RedisError(.reply, message)) }
            throw RoomcastError(RedisError(.unexpectedReply, "XINFO STREAM answered \(replies[1])"))
        }
        return Self.holdsEverything(after: offset, info: info) ? entries : nil
    }

    /// Whether a stream (its `XINFO STREAM` fields) still holds every entry it was given after
    /// `offset`: none was deleted past it, and none was trimmed unless the first one kept is at
    /// or before it. Trimming goes oldest first, so when `offset` itself is gone it cannot tell
    /// whether entries followed it before the first one kept: that counts as a loss (the node
    /// resyncs its sockets rather than leave a hole). A node's last offset is gone only once at
    /// least a stream's worth of newer events came, more than it replays anyway.
    static func holdsEverything(after offset: StreamOffset, info: [RedisReply]) -> Bool {
        var fields: [String: String] = [:]
        // Field, value, field, value … (`first-entry` and `last-entry` are entries, not read here).
        for index in stride(from: 0, to: info.count - 1, by: 2) {
            guard let name = info[index].string else { continue }
            switch info[index + 1] {
            case .integer(let number): fields[name] = String(number)
            case let value: if let text = value.string { fields[name] = text }
            }
        }
        if let deleted = fields["max-deleted-entry-id"].flatMap(StreamOffset.init), deleted > offset { return false }
        guard let length = fields["length"].flatMap(Int.init), let added = fields["entries-added"].flatMap(Int.init), added > length,
            let first = fields["recorded-first-entry-id"].flatMap(StreamOffset.init)
        else { return true }
        return first <= offset
    }
}
