public import NIOCore

/// One RESP2 reply, as hiredis parsed it.
///
/// A top-level error reply is thrown as ``RedisError`` by the single-command APIs; inside arrays
/// (pipelines, script results) it stays a value so that one failed element does not hide the rest.
public enum RedisReply: Sendable, Hashable {
    /// A simple string such as `OK` or `PONG`.
    case status(String)
    /// An error reply, with Redis's message (`ERR ...`, `WRONGTYPE ...`, `NOSCRIPT ...`).
    case error(String)
    /// An integer reply.
    case integer(Int64)
    /// A bulk string: raw bytes, not necessarily UTF-8.
    case bulk(ByteBuffer)
    /// A nil bulk string or nil array (RESP2 does not tell them apart through hiredis 0.14).
    case null
    /// An array of replies; elements may be nested arrays.
    case array([RedisReply])
}

extension RedisReply {
    /// The reply as text when it is a status or a bulk string.
    public var string: String? {
        switch self {
        case .status(let text): return text
        case .bulk(let bytes): return String(buffer: bytes)
        default: return nil
        }
    }

    /// True for `.null`.
    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }
}

extension RedisReply: CustomStringConvertible {
    public var description: String {
        switch self {
        case .status(let text): return text
        case .error(let message): return "(error) \(message)"
        case .integer(let value): return "(integer) \(value)"
        case .bulk(let bytes): return "\"\(String(buffer: bytes))\""
        case .null: return "(nil)"
        case .array(let elements): return "[" + elements.map(\.description).joined(separator: ", ") + "]"
        }
    }
}
