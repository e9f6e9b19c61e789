import Testing

@testable import RedisClient

@Suite("HashSlot")
struct HashSlotTests {
    /// `CLUSTER KEYSLOT` answers of redis-server 7.0.15.
    static let known: [(String, UInt16)] = [
        ("", 0),
        ("a", 15495),
        ("foo", 12182),
        ("bar", 5061),
        ("123456789", 12739),
        ("{user1000}.following", 3443),
        ("{user1000}.followers", 3443),
        ("foo{}{bar}", 8363),
        ("foo{{bar}}zap", 4015),
        ("foo{bar}{zap}", 5061),
        ("{}", 15257),
        ("room:{r1}:events", 2121),
        ("user:{u_2}:sockets", 15208),
        ("push:{outbox}", 15822),
        ("é", 10180),
    ]

    @Test("matches CLUSTER KEYSLOT", arguments: known)
    func matchesRedis(key: String, slot: UInt16) {
        #expect(HashSlot(key: key).rawValue == slot)
    }

    @Test("CRC-16/XMODEM check value")
    func checkValue() {
        #expect(HashSlot.crc16(Array("123456789".utf8)) == 0x31C3)
    }

    @Test("keys sharing a tag share a slot")
    func tags() {
        #expect(HashSlot(key: "{user1000}.following") == HashSlot(key: "{user1000}.followers"))
        #expect(HashSlot(key: "room:{abc}") == HashSlot(key: "room:{abc}:events"))
        #expect(HashSlot(key: "room:{abc}") == HashSlot(key: "abc"))
        #expect(HashSlot(key: "a{") == HashSlot(key: Array("a{".utf8)))
    }

    @Test("raw values outside 0..<16384 are refused")
    func rawValues() {
        #expect(HashSlot(rawValue: 0)?.rawValue == 0)
        #expect(HashSlot(rawValue: 16383)?.rawValue == 16383)
        #expect(HashSlot(rawValue: 16384) == nil)
        #expect(HashSlot(rawValue: -1) == nil)
    }
}
