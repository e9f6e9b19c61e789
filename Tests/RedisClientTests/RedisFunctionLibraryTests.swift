import NIOCore
import Testing

@testable import RedisClient

@Suite("RedisFunctionLibrary")
struct RedisFunctionLibraryTests {
    static let lua = "redis.register_function('one_' .. VERSION, function(keys, args) return 1 end)"

    @Test("the version is the first 12 hex digits of the Lua's SHA1, and names the library and its functions")
    func versioned() {
        let library = RedisFunctionLibrary(name: "app", lua: Self.lua)
        #expect(library.version.count == 12 && library.version.allSatisfy(\.isHexDigit))
        #expect(library.name == "app_\(library.version)")
        #expect(library.registeredName(of: "one") == "one_\(library.version)")
        #expect(library.source == "#!lua name=app_\(library.version)\nlocal VERSION = '\(library.version)'\n" + Self.lua)
        // SHA1 of the UTF-8 bytes: "return 1" hashes to e0e1f9fabfc9…
        #expect(RedisFunctionLibrary(name: "x", lua: "return 1").version == "e0e1f9fabfc9")
    }

    @Test("another Lua is another version; the same Lua the same")
    func versionFollowsTheSource() {
        let one = RedisFunctionLibrary(name: "app", lua: Self.lua)
        #expect(RedisFunctionLibrary(name: "app", lua: Self.lua) == one)
        #expect(RedisFunctionLibrary(name: "app", lua: Self.lua + "\n").version != one.version)
    }

    @Test("a call is FCALL, or FCALL_RO for a read-only function, with the versioned name, the key count, keys and arguments")
    func callEncoding() {
        let library = RedisFunctionLibrary(name: "app", lua: Self.lua)
        let write = RedisFunctionCall("one", in: library, keys: ["a{x}", "b{x}"], arguments: ["v", 3], isReadOnly: false)
        #expect(write.command.words.map { String(buffer: $0) } == ["FCALL", "one_\(library.version)", "2", "a{x}", "b{x}", "v", "3"])
        #expect(write.command.keys == ["a{x}", "b{x}"])
        let read = RedisFunctionCall("one", in: library, keys: [], arguments: [], isReadOnly: true)
        #expect(read.command.words.map { String(buffer: $0) } == ["FCALL_RO", "one_\(library.version)", "0"])
        #expect(write.function == "one")
    }
}
