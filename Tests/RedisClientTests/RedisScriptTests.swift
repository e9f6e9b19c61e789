import Testing

@testable import RedisClient

@Suite("RedisScript")
struct RedisScriptTests {
    @Test("sha1 is the lowercase hex SHA1 of the source, as SCRIPT LOAD reports it")
    func sha1() {
        let script = RedisScript(name: "one", source: "return 1")
        #expect(script.sha1 == "e0e1f9fabfc9d4800c877a703b823ac0578ff8db")
        #expect(script.name == "one")
        #expect(script.source == "return 1")
    }

    @Test("sha1 hashes the UTF-8 bytes and zero-pads every byte")
    func sha1OfOtherSources() {
        #expect(RedisScript(name: "empty", source: "").sha1 == "da39a3ee5e6b4b0d3255bfef95601890afd80709")
        #expect(RedisScript(name: "utf8", source: "return 'é'").sha1 == "6832e39b721242dbb406e4bf358bfebb712064d7")
    }
}
