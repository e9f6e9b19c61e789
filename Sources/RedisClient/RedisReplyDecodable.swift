public import NIOCore

/// A type a reply can be decoded into: `try await client.send(command, as: Int.self)`.
public protocol RedisReplyDecodable {
    /// Decodes the value, throwing ``RedisError/Code/unexpectedReply`` for a reply of another shape.
    init(redisReply: RedisReply) throws(RedisError)
}

extension RedisError {
    static func unexpected(_ reply: RedisReply, expected: String) -> RedisError {
        if case .error(let message) = reply { return RedisError(.reply, message) }
        return RedisError(.unexpectedReply, "expected \(expected), got \(reply)")
    }
}

extension RedisReply: RedisReplyDecodable {
    public init(redisReply: RedisReply) { self = redisReply }
}

extension Int64: RedisReplyDecodable {
    public init(redisReply: RedisReply) throws(RedisError) {
        switch redisReply {
        case .integer(let value): self = value
        case .bulk(let bytes):
            guard let value = Int64(String(buffer: bytes)) else { throw .unexpected(redisReply, expected: "an integer") }
            self = value
        default: throw .unexpected(redisReply, expected: "an integer")
        }
    }
}

extension Int: RedisReplyDecodable {
    public init(redisReply: RedisReply) throws(RedisError) {
        self = Int(try Int64(redisReply: redisReply))
    }
}

extension Bool: RedisReplyDecodable {
    /// Integer replies 0 and 1 (`SISMEMBER`, `EXISTS`, `SADD` of one member).
    public init(redisReply: RedisReply) throws(RedisError) {
        self = try Int64(redisReply: redisReply) != 0
    }
}

extension String: RedisReplyDecodable {
    public init(redisReply: RedisReply) throws(RedisError) {
        guard let text = redisReply.string else { throw .unexpected(redisReply, expected: "a string") }
        self = text
    }
}

extension ByteBuffer: RedisReplyDecodable {
    public init(redisReply: RedisReply) throws(RedisError) {
        guard case .bulk(let bytes) = redisReply else { throw .unexpected(redisReply, expected: "a bulk string") }
        self = bytes
    }
}

extension Optional: RedisReplyDecodable where Wrapped: RedisReplyDecodable {
    public init(redisReply: RedisReply) throws(RedisError) {
        self = redisReply.isNull ? nil : try Wrapped(redisReply: redisReply)
    }
}

extension Array: RedisReplyDecodable where Element: RedisReplyDecodable {
    public init(redisReply: RedisReply) throws(RedisError) {
        guard case .array(let elements) = redisReply else { throw .unexpected(redisReply, expected: "an array") }
        var result: [Element] = []
        result.reserveCapacity(elements.count)
        for element in elements {
            result.append(try Element(redisReply: element))
        }
        self = result
    }
}
