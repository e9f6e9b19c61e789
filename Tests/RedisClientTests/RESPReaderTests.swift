import NIOCore
import Testing

@testable import RedisClient

@Suite("RESPReader")
struct RESPReaderTests {
    private static func bulk(_ text: String) -> RedisReply { .bulk(ByteBuffer(string: text)) }

    /// Feeds `bytes` at once and returns every complete reply.
    private static func parse(_ bytes: String) throws(RedisError) -> [RedisReply] {
        let reader = RESPReader(allocator: ByteBufferAllocator())
        try reader.feed(ByteBuffer(string: bytes))
        return try drain(reader)
    }

    private static func drain(_ reader: RESPReader) throws(RedisError) -> [RedisReply] {
        var replies: [RedisReply] = []
        while let reply = try reader.next() {
            replies.append(reply)
        }
        return replies
    }

    static let cases: [(String, RedisReply)] = [
        ("+OK\r\n", .status("OK")),
        ("+\r\n", .status("")),
        ("-ERR unknown command 'FOO'\r\n", .error("ERR unknown command 'FOO'")),
        ("-WRONGTYPE Operation against a key\r\n", .error("WRONGTYPE Operation against a key")),
        (":0\r\n", .integer(0)),
        (":42\r\n", .integer(42)),
        (":-7\r\n", .integer(-7)),
        (":9223372036854775807\r\n", .integer(.max)),
        (":-9223372036854775808\r\n", .integer(.min)),
        ("$5\r\nhello\r\n", bulk("hello")),
        ("$0\r\n\r\n", bulk("")),
        ("$4\r\na\r\nb\r\n", bulk("a\r\nb")),
        ("$6\r\nh\u{e9}llo\r\n", bulk("héllo")),
        ("$-1\r\n", .null),
        ("*-1\r\n", .null),
        ("*0\r\n", .array([])),
        ("*2\r\n$1\r\na\r\n:1\r\n", .array([bulk("a"), .integer(1)])),
        ("*3\r\n$-1\r\n-ERR x\r\n+OK\r\n", .array([.null, .error("ERR x"), .status("OK")])),
        (
            "*3\r\n*2\r\n:1\r\n*1\r\n$1\r\nz\r\n*0\r\n*-1\r\n",
            .array([.array([.integer(1), .array([bulk("z")])]), .array([]), .null])
        ),
    ]

    @Test("parses one reply", arguments: cases)
    func parsesOne(bytes: String, expected: RedisReply) throws {
        #expect(try Self.parse(bytes) == [expected])
    }

    @Test("binary bulk bytes arrive untouched")
    func binaryBulk() throws {
        let payload: [UInt8] = [0x00, 0xFF, 0x0D, 0x0A, 0x24, 0x80]
        let reader = RESPReader(allocator: ByteBufferAllocator())
        try reader.feed(ByteBuffer(bytes: Array("$6\r\n".utf8) + payload + Array("\r\n".utf8)))
        #expect(try Self.drain(reader) == [.bulk(ByteBuffer(bytes: payload))])
    }

    @Test("several replies in one feed come out in order")
    func severalInOneFeed() throws {
        let bytes = Self.cases.map(\.0).joined()
        #expect(try Self.parse(bytes) == Self.cases.map(\.1))
    }

    @Test("drip-fed one byte at a time, each reply appears exactly when its last byte arrives")
    func dripFeed() throws {
        let reader = RESPReader(allocator: ByteBufferAllocator())
        var expectedEnds: [Int] = []
        var bytes: [UInt8] = []
        for (text, _) in Self.cases {
            bytes += text.utf8
            expectedEnds.append(bytes.count)
        }
        var ends: [Int] = []
        var replies: [RedisReply] = []
        for (offset, byte) in bytes.enumerated() {
            try reader.feed(ByteBuffer(bytes: [byte]))
            for reply in try Self.drain(reader) {
                replies.append(reply)
                ends.append(offset + 1)
            }
        }
        #expect(replies == Self.cases.map(\.1))
        #expect(ends == expectedEnds)
    }

    @Test("a partial reply waits for the rest")
    func partial() throws {
        let reader = RESPReader(allocator: ByteBufferAllocator())
        try reader.feed(ByteBuffer(string: "*2\r\n$5\r\nhel"))
        #expect(try reader.next() == nil)
        try reader.feed(ByteBuffer(string: "lo\r\n"))
        #expect(try reader.next() == nil)
        try reader.feed(ByteBuffer(string: ":1\r\n+OK"))
        #expect(try reader.next() == .array([Self.bulk("hello"), .integer(1)]))
        #expect(try reader.next() == nil)
        try reader.feed(ByteBuffer(string: "\r\n"))
        #expect(try reader.next() == .status("OK"))
    }

    @Test("only a buffer's readable bytes are fed")
    func readableBytesOnly() throws {
        var buffer = ByteBuffer(string: "garbage+PONG\r\n")
        buffer.moveReaderIndex(forwardBy: 7)
        let reader = RESPReader(allocator: ByteBufferAllocator())
        try reader.feed(buffer)
        try reader.feed(ByteBuffer())
        #expect(try Self.drain(reader) == [.status("PONG")])
    }

    @Test("a large bulk string fed in chunks comes out byte for byte")
    func largeBulkInChunks() throws {
        let payload = (0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let stream = Array("$\(payload.count)\r\n".utf8) + payload + Array("\r\n:1\r\n".utf8)
        let reader = RESPReader(allocator: ByteBufferAllocator())
        var replies: [RedisReply] = []
        var start = 0
        while start < stream.count {
            let end = min(start + 4_093, stream.count)
            try reader.feed(ByteBuffer(bytes: stream[start..<end]))
            replies += try Self.drain(reader)
            start = end
        }
        #expect(replies == [.bulk(ByteBuffer(bytes: payload)), .integer(1)])
    }

    @Test("an unknown type byte is a .protocolError", arguments: ["?x\r\n", "x\r\n", "\r\n", "_\r\n"])
    func protocolError(bytes: String) {
        let error = #expect(throws: RedisError.self) { try Self.parse(bytes) }
        #expect(error?.code == .protocolError)
        #expect(error?.message.isEmpty == false)
    }

    @Test("replies before a protocol error still come out; the reader then stays failed")
    func protocolErrorAfterGoodReply() throws {
        let reader = RESPReader(allocator: ByteBufferAllocator())
        try reader.feed(ByteBuffer(string: "+OK\r\n?x\r\n"))
        #expect(try reader.next() == .status("OK"))
        #expect(throws: RedisError.self) { try reader.next() }
        let error = #expect(throws: RedisError.self) {
            try reader.feed(ByteBuffer(string: "+OK\r\n"))
            _ = try reader.next()
        }
        #expect(error?.code == .protocolError)
    }
}
