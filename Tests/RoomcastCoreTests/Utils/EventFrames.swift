import Foundation
import NIOCore
import RedisClient
import RoomcastCore
import Testing

/// A Socket.IO event frame `42["name",payload]` taken apart with `JSONSerialization`.
struct ParsedEventFrame {
    var name: String
    var payload: [String: Any]

    /// Parses `text`, which must be `42` followed by a JSON array of the name and one object.
    init(_ text: String) throws {
        guard text.hasPrefix("42") else { throw FrameError("not an event frame: \(text)") }
        let json = try JSONSerialization.jsonObject(with: Data(text.dropFirst(2).utf8))
        guard let array = json as? [Any], array.count == 2, let name = array[0] as? String,
            let payload = array[1] as? [String: Any]
        else { throw FrameError("not [name, {object}]: \(text)") }
        self.name = name
        self.payload = payload
    }

    init(_ buffer: ByteBuffer) throws {
        try self.init(String(buffer: buffer))
    }
}

/// A Socket.IO event frame decoded into typed values.
struct DecodedEvent<Payload: Decodable>: Decodable {
    var name: String
    var payload: Payload

    init(from decoder: any Decoder) throws {
        var container = try decoder.unkeyedContainer()
        name = try container.decode(String.self)
        payload = try container.decode(Payload.self)
        guard container.isAtEnd else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "more than one argument")
        }
    }

    /// Decodes `42[...]`.
    init(frame: ByteBuffer) throws {
        let text = String(buffer: frame)
        guard text.hasPrefix("42") else { throw FrameError("not an event frame: \(text)") }
        self = try JSONCoding.decode(Self.self, from: ByteBuffer(string: String(text.dropFirst(2))))
    }
}

struct FrameError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// A Redis stream entry id `<ms>-<seq>`, ordered as Redis orders them.
struct StreamID: Comparable, CustomStringConvertible {
    var milliseconds: UInt64
    var sequence: UInt64

    init?(_ text: some StringProtocol) {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 2, let milliseconds = UInt64(parts[0]), let sequence = UInt64(parts[1]) else { return nil }
        self.milliseconds = milliseconds
        self.sequence = sequence
    }

    static func < (lhs: Self, rhs: Self) -> Bool {
        (lhs.milliseconds, lhs.sequence) < (rhs.milliseconds, rhs.sequence)
    }

    var description: String { "\(milliseconds)-\(sequence)" }
}

/// One entry of an `XRANGE`/`XREVRANGE` reply.
struct StreamEntry {
    var id: String
    var fields: [String: String]

    /// The entries of an `XRANGE`-style reply, in reply order.
    static func entries(_ reply: RedisReply) throws -> [StreamEntry] {
        guard case .array(let elements) = reply else { throw FrameError("not a stream reply: \(reply)") }
        return try elements.map { element in
            guard case .array(let pair) = element, pair.count == 2, let id = pair[0].string else {
                throw FrameError("not a stream entry: \(element)")
            }
            return StreamEntry(id: id, fields: pair[1].fields)
        }
    }
}
