import NIOCore
import Testing

@testable import RedisClient

@Suite("RedisCommand.slot()")
struct RedisCommandSlotTests {
    private static func slot(_ key: String) -> HashSlot { HashSlot(key: key) }

    @Test("declared keys win; keys are found by position for the commands the stores send")
    func findsKeys() throws {
        let room = "room:{r1}"
        #expect(try RedisCommand("GET", room).slot() == Self.slot(room))
        #expect(try RedisCommand("HMGET", [room, "a", "b"]).slot() == Self.slot(room))
        #expect(try RedisCommand("DEL", "room:{r1}:z", "room:{r1}:stream").slot() == Self.slot(room))
        #expect(try RedisCommand("EVALSHA", ["abc", 2, "room:{r1}", "room:{r1}:z", "user:{u}"]).slot() == Self.slot(room))
        #expect(try RedisCommand("XGROUP", "CREATE", "push:{outbox}", "g", "0", "MKSTREAM").slot() == Self.slot("push:{outbox}"))
        #expect(try RedisCommand("XREADGROUP", "GROUP", "g", "c", "COUNT", 1, "STREAMS", "push:{outbox}", ">").slot() == Self.slot("push:{outbox}"))
        #expect(try RedisCommand("SPUBLISH", "user:{u}:events", "x").slot() == Self.slot("user:{u}"))
        #expect(try RedisCommand("zrange", "users", 0, -1).slot() == Self.slot("users"))
        #expect(try RedisCommand("CUSTOM", ["anything"], keys: ["user:{u}"]).slot() == Self.slot("u"))
        #expect(try RedisCommand("EVALSHA", ["abc", 0]).slot() == nil)
        #expect(try RedisCommand("PING").slot() == nil)
        #expect(try RedisCommand("SCRIPT", "LOAD", "return 1").slot() == nil)
        #expect(try RedisCommand("PUBSUB", "SHARDNUMSUB", "room:{r1}:events").slot() == Self.slot(room))
        #expect(try RedisCommand("PUBSUB", "SHARDCHANNELS", "room:*").slot() == nil)
    }

    @Test("keys in two slots are refused as .crossSlot")
    func crossSlot() {
        let error = #expect(throws: RedisError.self) { try RedisCommand("DEL", "user:{a}", "user:{b}").slot() }
        #expect(error?.code == .crossSlot)
        let script = #expect(throws: RedisError.self) {
            try RedisCommand("EVALSHA", ["abc", 2, "user:{a}", "push:{outbox}"], keys: ["user:{a}", "push:{outbox}"]).slot()
        }
        #expect(script?.code == .crossSlot)
    }

    @Test("words read back what was encoded")
    func words() {
        let words = RedisCommand("SET", "k", 12, "v").words.map { String(buffer: $0) }
        #expect(words == ["SET", "k", "12", "v"])
    }
}
