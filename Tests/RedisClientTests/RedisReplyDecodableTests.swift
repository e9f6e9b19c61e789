import NIOCore
import Testing

@testable import RedisClient

@Suite("RedisReplyDecodable")
struct RedisReplyDecodableTests {
    private static func bulk(_ text: String) -> RedisReply { .bulk(ByteBuffer(string: text)) }

    @Test func intFromIntegerAndNumericBulk() throws {
        #expect(try Int(redisReply: .integer(42)) == 42)
        #expect(try Int(redisReply: .integer(-7)) == -7)
        #expect(try Int(redisReply: Self.bulk("123")) == 123)
        #expect(try Int(redisReply: Self.bulk("-9223372036854775808")) == Int.min)
        #expect(try Int64(redisReply: .integer(Int64.max)) == Int64.max)
        #expect(try Int64(redisReply: Self.bulk("10")) == 10)
    }

    @Test func stringFromStatusAndBulk() throws {
        #expect(try String(redisReply: .status("OK")) == "OK")
        #expect(try String(redisReply: Self.bulk("héllo")) == "héllo")
        #expect(try String(redisReply: Self.bulk("")) == "")
    }

    @Test func byteBufferFromBulk() throws {
        let bytes = ByteBuffer(bytes: [0x00, 0x0D, 0x0A, 0xFF])
        #expect(try ByteBuffer(redisReply: .bulk(bytes)) == bytes)
    }

    @Test func replyDecodesAsItself() {
        let reply = RedisReply.array([.integer(1), .null, .status("OK")])
        #expect(RedisReply(redisReply: reply) == reply)
    }

    @Test func optionalFromNull() throws {
        #expect(try String?(redisReply: .null) == nil)
        #expect(try String?(redisReply: Self.bulk("v")) == "v")
        #expect(try Int?(redisReply: .null) == nil)
        #expect(try Int?(redisReply: .integer(3)) == 3)
    }

    @Test func arrays() throws {
        #expect(try [Int](redisReply: .array([.integer(1), Self.bulk("2"), .integer(3)])) == [1, 2, 3])
        #expect(try [String](redisReply: .array([])) == [])
        #expect(try [String?](redisReply: .array([Self.bulk("a"), .null, .status("b")])) == ["a", nil, "b"])
        #expect(try [[Int]](redisReply: .array([.array([.integer(1)]), .array([])])) == [[1], []])
    }

    @Test func bool() throws {
        #expect(try Bool(redisReply: .integer(1)) == true)
        #expect(try Bool(redisReply: .integer(0)) == false)
        #expect(try Bool(redisReply: .integer(3)) == true)
        #expect(try Bool(redisReply: Self.bulk("1")) == true)
    }

    static let wrongShapes: [(String, @Sendable () throws -> Void)] = [
        ("Int from status", { _ = try Int(redisReply: .status("OK")) }),
        ("Int from non-numeric bulk", { _ = try Int(redisReply: bulk("12a")) }),
        ("Int from empty bulk", { _ = try Int(redisReply: bulk("")) }),
        ("Int from null", { _ = try Int(redisReply: .null) }),
        ("Int from array", { _ = try Int(redisReply: .array([.integer(1)])) }),
        ("Int64 from out-of-range bulk", { _ = try Int64(redisReply: bulk("9223372036854775808")) }),
        ("String from integer", { _ = try String(redisReply: .integer(1)) }),
        ("String from null", { _ = try String(redisReply: .null) }),
        ("String from array", { _ = try String(redisReply: .array([])) }),
        ("ByteBuffer from status", { _ = try ByteBuffer(redisReply: .status("OK")) }),
        ("Array from bulk", { _ = try [String](redisReply: bulk("a")) }),
        ("Array from null", { _ = try [String](redisReply: .null) }),
        ("Array with a bad element", { _ = try [Int](redisReply: .array([.integer(1), .status("x")])) }),
        ("Bool from status", { _ = try Bool(redisReply: .status("OK")) }),
    ]

    @Test("wrong shapes throw .unexpectedReply")
    func wrongShapes() {
        for (name, decode) in Self.wrongShapes {
            let error = #expect(throws: RedisError.self, "\(name)") { try decode() }
            #expect(error?.code == .unexpectedReply, "\(name): \(String(describing: error))")
        }
    }

    @Test("an error reply is thrown as .reply with Redis's message")
    func errorReply() {
        let reply = RedisReply.error("WRONGTYPE Operation against a key holding the wrong kind of value")
        let decoders: [(String, @Sendable () throws -> Void)] = [
            ("Int", { _ = try Int(redisReply: reply) }),
            ("String", { _ = try String(redisReply: reply) }),
            ("ByteBuffer", { _ = try ByteBuffer(redisReply: reply) }),
            ("String?", { _ = try String?(redisReply: reply) }),
            ("[Int]", { _ = try [Int](redisReply: reply) }),
            ("[Int] element", { _ = try [Int](redisReply: .array([.integer(1), reply])) }),
            ("Bool", { _ = try Bool(redisReply: reply) }),
        ]
        for (name, decode) in decoders {
            let error = #expect(throws: RedisError.self, "\(name)") { try decode() }
            #expect(error?.code == .reply, "\(name)")
            #expect(error?.message == "WRONGTYPE Operation against a key holding the wrong kind of value", "\(name)")
            #expect(error?.replyPrefix == "WRONGTYPE", "\(name)")
        }
    }
}
