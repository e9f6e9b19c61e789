import NIOCore
import RedisClient

/// What a function answers, read from its reply's fields by name.
protocol FunctionReply: Sendable {
    /// The reply's fields, in the order the Lua header's `REPLY` line lists them.
    associatedtype Field: ReplyField

    /// Reads the reply; a field missing or of another shape throws ``RedisError/Code/unexpectedReply``.
    init(_ reply: NamedReply<Field>) throws(RedisError)
}

/// A function's reply: name/value pairs (`{ 'offset', offset, 'updates', json }` in the Lua), each
/// value read by its field's name. Fields the declaration does not know are skipped, so a reply may
/// grow a field before its readers do.
struct NamedReply<Field: ReplyField>: Sendable {
    /// The function, for errors.
    let function: String
    /// The fields the reply has, in its order (a handful: found by a look along them).
    private var values: [(field: Field, value: RedisReply)] = []

    /// Reads the pairs of `reply` (an empty array has none).
    init(_ reply: RedisReply, of function: String) throws(RedisError) {
        self.function = function
        guard case .array(let pairs) = reply, pairs.count.isMultiple(of: 2) else {
            throw RedisError(.unexpectedReply, "\(function) answered \(reply), not name/value pairs")
        }
        values.reserveCapacity(pairs.count / 2)
        var index = pairs.startIndex
        while index < pairs.endIndex {
            if let name = pairs[index].string, let field = Field(rawValue: name) {
                values.append((field, pairs[index + 1]))
            }
            index += 2
        }
    }

    /// Whether the reply has `field`.
    func has(_ field: Field) -> Bool {
        values.contains { $0.field == field }
    }

    /// The value of `field` as Redis sent it.
    func value(_ field: Field) throws(RedisError) -> RedisReply {
        guard let value = values.first(where: { $0.field == field })?.value else {
            throw RedisError(.unexpectedReply, "\(function) answered no \(field.rawValue)")
        }
        return value
    }

    /// `field` decoded as `type`.
    func decode<Value: RedisReplyDecodable>(_ field: Field, as type: Value.Type = Value.self) throws(RedisError) -> Value {
        do {
            return try Value(redisReply: try value(field))
        } catch where error.code == .unexpectedReply {
            throw RedisError(.unexpectedReply, "\(function) answered \(field.rawValue): \(error.message)")
        }
    }

    /// `field` decoded as `type`, or nil when the reply does not have it.
    func decodeIfPresent<Value: RedisReplyDecodable>(_ field: Field, as type: Value.Type = Value.self) throws(RedisError) -> Value? {
        has(field) ? try decode(field, as: type) : nil
    }

    /// A string field.
    func string(_ field: Field) throws(RedisError) -> String { try decode(field) }

    /// An integer field.
    func int(_ field: Field) throws(RedisError) -> Int { try decode(field) }

    /// A bulk-string field's bytes (a JSON value written by the Lua, forwarded as is).
    func bytes(_ field: Field) throws(RedisError) -> ByteBuffer { try decode(field) }
}
