import NIOCore
import RedisClient
import Testing

@testable import RoomcastCore

/// A function's reply read by name (`NamedReply`), and the reply shapes the declarations read.
@Suite("NamedReply")
struct NamedReplyTests {
    enum Field: String, ReplyField {
        case offset, count, element
        var isOptional: Bool { self == .element }
    }

    static func bulk(_ text: String) -> RedisReply { .bulk(ByteBuffer(string: text)) }

    @Test("fields are read by name whatever their order; unknown ones are skipped; a missing optional one is absent")
    func byName() throws {
        let reply = try NamedReply<Field>(.array([Self.bulk("count"), .integer(3), Self.bulk("later"), Self.bulk("x"), Self.bulk("offset"), Self.bulk("1-0")]), of: "f")
        #expect(try reply.string(.offset) == "1-0")
        #expect(try reply.int(.count) == 3)
        #expect(!reply.has(.element))
        #expect(try reply.decodeIfPresent(.element, as: ByteBuffer.self) == nil)
    }

    @Test("a missing field, a field of another shape, or a reply that is not pairs is an unexpected reply naming the function")
    func refusals() throws {
        let reply = try NamedReply<Field>(.array([Self.bulk("offset"), .array([])]), of: "element_update")
        let missing = #expect(throws: RedisError.self) { try reply.int(.count) }
        #expect(missing?.code == .unexpectedReply && missing?.message.contains("element_update answered no count") == true)
        let shape = #expect(throws: RedisError.self) { try reply.string(.offset) }
        #expect(shape?.code == .unexpectedReply && shape?.message.contains("element_update answered offset") == true)
        #expect(throws: RedisError.self) { try NamedReply<Field>(.array([Self.bulk("offset")]), of: "f") }
        #expect(throws: RedisError.self) { try NamedReply<Field>(.integer(1), of: "f") }
        // An error reply is Redis's error, not a shape problem.
        let refused = #expect(throws: RedisError.self) { try NamedReply<Field>(.array([Self.bulk("offset"), .error("ERR x")]), of: "f").string(.offset) }
        #expect(refused?.code == .reply)
        // No fields at all (a function that answers `{}`) is a reply too.
        #expect(!(try NamedReply<Field>(.array([]), of: "f")).has(.offset))
    }

    @Test("unseen counts and HGETALL-style fields read as name/value pairs, integers as text")
    func pairs() throws {
        let counts = try UnseenCounts(redisReply: .array([Self.bulk("alice"), .integer(2), Self.bulk("bob"), .integer(0)]))
        #expect(Dictionary(uniqueKeysWithValues: counts.map { ($0.0.rawValue, $0.1) }) == ["alice": 2, "bob": 0])
        #expect(try RedisFields(redisReply: .array([Self.bulk("name"), Self.bulk("Lisbon")])).values == ["name": "Lisbon"])
        #expect(throws: RedisError.self) { try RedisFields(redisReply: .array([Self.bulk("name")])) }
    }

    @Test("a replayed request's recorded reply reads as the first one did, marked replayed")
    func replayed() throws {
        let fresh = try RoomcastFunctions.MessageSend.Reply(NamedReply(.array([Self.bulk("offset"), Self.bulk("1-0")]), of: "message_send"))
        #expect(!fresh.isReplay && fresh.offset == "1-0")
        let replay = try RoomcastFunctions.MessageSend.Reply(
            NamedReply(.array([Self.bulk("replayed"), .integer(1), Self.bulk("offset"), Self.bulk("1-0"), Self.bulk("message"), Self.bulk("{}")]), of: "message_send")
        )
        #expect(replay.isReplay && replay.offset == "1-0" && replay.replayed.map { String(buffer: $0) } == "{}")
    }
}
