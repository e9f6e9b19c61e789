import NIOCore
import Testing

@testable import RedisClient

@Suite("RedisCommand encoding")
struct RedisCommandTests {
    /// The encoded bytes of a command, as text when they are printable.
    private static func resp(_ command: RedisCommand) -> String {
        String(decoding: command.encoded.readableBytesView, as: UTF8.self)
    }

    @Test func setKeyValue() {
        let command = RedisCommand("SET", "k", "v")
        #expect(Self.resp(command) == "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n")
        #expect(command.name == "SET")
        #expect(command.description == "SET")
        #expect(command.keys.isEmpty)
    }

    @Test func nameOnly() {
        #expect(Self.resp(RedisCommand("PING")) == "*1\r\n$4\r\nPING\r\n")
    }

    @Test func argumentArrayAndKeys() {
        let command = RedisCommand("EVALSHA", ["abc", 1, "key", 2.5], keys: ["key"])
        #expect(Self.resp(command) == "*5\r\n$7\r\nEVALSHA\r\n$3\r\nabc\r\n$1\r\n1\r\n$3\r\nkey\r\n$3\r\n2.5\r\n")
        #expect(command.keys == ["key"])
    }

    @Test(
        "Int arguments are decimal bulk strings",
        arguments: [
            (0, "$1\r\n0\r\n"),
            (7, "$1\r\n7\r\n"),
            (9, "$1\r\n9\r\n"),
            (10, "$2\r\n10\r\n"),
            (99, "$2\r\n99\r\n"),
            (100, "$3\r\n100\r\n"),
            (-1, "$2\r\n-1\r\n"),
            (-9, "$2\r\n-9\r\n"),
            (-10, "$3\r\n-10\r\n"),
            (-123, "$4\r\n-123\r\n"),
            (Int.max, "$19\r\n9223372036854775807\r\n"),
            (Int.min, "$20\r\n-9223372036854775808\r\n"),
        ]
    )
    func int(value: Int, expected: String) {
        #expect(Self.resp(RedisCommand("X", value)) == "*2\r\n$1\r\nX\r\n" + expected)
    }

    @Test("Int length prefixes match the digits around every power of ten")
    func intAroundPowersOfTen() {
        var power = 1
        for _ in 0..<19 {
            for value in [power - 1, power, power + 1, -(power - 1), -power, -(power + 1)] {
                let text = String(value)
                #expect(Self.resp(RedisCommand("X", value)) == "*2\r\n$1\r\nX\r\n$\(text.utf8.count)\r\n\(text)\r\n")
            }
            if power <= Int.max / 10 { power *= 10 }
        }
    }

    @Test func int64() {
        #expect(Self.resp(RedisCommand("X", Int64(-42))) == "*2\r\n$1\r\nX\r\n$3\r\n-42\r\n")
        #expect(Self.resp(RedisCommand("X", Int64.min)) == "*2\r\n$1\r\nX\r\n$20\r\n-9223372036854775808\r\n")
    }

    @Test("binary arguments are written byte for byte, CR LF included")
    func binary() {
        let bytes: [UInt8] = [0x00, 0x0D, 0x0A, 0xFF, 0x24, 0x2A, 0x0D]
        let expected = Array("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$7\r\n".utf8) + bytes + Array("\r\n".utf8)
        let fromBuffer = RedisCommand("SET", "k", ByteBuffer(bytes: bytes))
        #expect(Array(fromBuffer.encoded.readableBytesView) == expected)
        let fromArray = RedisCommand("SET", "k", bytes)
        #expect(Array(fromArray.encoded.readableBytesView) == expected)
    }

    @Test("a ByteBuffer argument contributes only its readable bytes")
    func bufferWithMovedReaderIndex() {
        var buffer = ByteBuffer(string: "skip-payload")
        buffer.moveReaderIndex(forwardBy: 5)
        #expect(Self.resp(RedisCommand("X", buffer)) == "*2\r\n$1\r\nX\r\n$7\r\npayload\r\n")
    }

    @Test func emptyString() {
        #expect(Self.resp(RedisCommand("SET", "k", "")) == "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$0\r\n\r\n")
    }

    @Test(
        "String lengths count UTF-8 bytes, not characters",
        arguments: [
            ("héllo", 6),
            ("日本", 6),
            ("😀", 4),
            ("e\u{301}", 3),
        ]
    )
    func utf8(text: String, byteCount: Int) {
        #expect(Self.resp(RedisCommand("X", text)) == "*2\r\n$1\r\nX\r\n$\(byteCount)\r\n\(text)\r\n")
        #expect(Self.resp(RedisCommand("X", text[...])) == "*2\r\n$1\r\nX\r\n$\(byteCount)\r\n\(text)\r\n")
    }

    @Test("a multibyte command name is counted in bytes too")
    func utf8Name() {
        #expect(Self.resp(RedisCommand("É")) == "*1\r\n$2\r\nÉ\r\n")
    }

    @Test(
        "Double arguments use Swift's shortest round-trip text",
        arguments: [
            (1.5, "1.5"),
            (-0.25, "-0.25"),
            (3.0, "3.0"),
            (0.1, "0.1"),
            (Double.infinity, "inf"),
            (-Double.infinity, "-inf"),
        ]
    )
    func double(value: Double, text: String) {
        #expect(Self.resp(RedisCommand("X", value)) == "*2\r\n$1\r\nX\r\n$\(text.utf8.count)\r\n\(text)\r\n")
    }
}
