public import RedisClient

/// A flat `[name, value, name, value …]` reply (`HGETALL`, `ZRANGE … WITHSCORES`, a function's
/// user/count pairs) read as a dictionary, by name.
public struct RedisFields: RedisReplyDecodable, Sendable {
    /// The pairs; a later name wins over an earlier one.
    public var values: [String: String]

    public init(redisReply: RedisReply) throws(RedisError) {
        guard case .array(let elements) = redisReply, elements.count.isMultiple(of: 2) else {
            throw RedisError(.unexpectedReply, "expected name/value pairs, got \(redisReply)")
        }
        var values: [String: String] = [:]
        values.reserveCapacity(elements.count / 2)
        var index = elements.startIndex
        while index < elements.endIndex {
            if let name = elements[index].string, let value = elements[index + 1].string ?? (try? Int64(redisReply: elements[index + 1])).map(String.init) {
                values[name] = value
            }
            index += 2
        }
        self.values = values
    }
}

extension RedisReply {
    /// An `HGETALL`-style reply as a dictionary (empty for any other shape).
    public var fields: [String: String] {
        (try? RedisFields(redisReply: self))?.values ?? [:]
    }
}
