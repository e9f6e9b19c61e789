import NIOCore
import RedisClient
import RoomcastTestSupport
import Testing

@Suite("RedisClient against a real redis-server")
struct RedisClientCommandTests {
    @Test("10,000 concurrent INCRs from many tasks end at exactly 10,000")
    func concurrentIncrements() async throws {
        try await RedisServer.with { server in
            try await withClient(try testConfiguration(server, poolSize: 4)) { client in
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for _ in 0..<100 {
                        group.addTask {
                            for _ in 0..<100 { _ = try await client.send("INCR", "counter") }
                        }
                    }
                    try await group.waitForAll()
                }
                #expect(try await client.send(RedisCommand("GET", "counter"), as: Int.self) == 10_000)
            }
        }
    }

    @Test("replies stay matched to their callers under pipelining")
    func repliesStayMatched() async throws {
        try await RedisServer.with { server in
            try await withClient(try testConfiguration(server, poolSize: 1)) { client in
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for task in 0..<50 {
                        group.addTask {
                            for round in 0..<40 {
                                let value = "value-\(task)-\(round)"
                                _ = try await client.send("SET", "key:\(task)", value)
                                let echoed = try await client.send(RedisCommand("GET", "key:\(task)"), as: String.self)
                                #expect(echoed == value)
                            }
                        }
                    }
                    try await group.waitForAll()
                }
                let replies = try await client.pipeline(
                    (0..<500).map { RedisCommand("ECHO", "echo-\($0)") } + [RedisCommand("INCRBY", "n", 7), RedisCommand("NOSUCHCOMMAND")]
                )
                #expect(replies.count == 502)
                for (index, reply) in replies.prefix(500).enumerated() {
                    #expect(reply.string == "echo-\(index)")
                }
                #expect(replies[500] == .integer(7))
                guard case .error(let message) = replies[501] else {
                    Issue.record("expected an error element, got \(replies[501])")
                    return
                }
                #expect(message.hasPrefix("ERR unknown command"))
            }
        }
    }

    @Test("a 10 MB bulk string round-trips byte for byte")
    func largeBulk() async throws {
        try await RedisServer.with { server in
            try await withClient(try testConfiguration(server)) { client in
                // Every byte value, in a pattern that shifts by block, so a misplaced slice shows.
                var bytes = [UInt8](repeating: 0, count: 10 * 1024 * 1024)
                for block in stride(from: 0, to: bytes.count, by: 256) {
                    bytes[block] = UInt8(truncatingIfNeeded: block / 256)
                    bytes[block + 1] = 0x0D
                    bytes[block + 2] = 0x0A
                }
                let payload = ByteBuffer(bytes: bytes)
                _ = try await client.send("SET", "big", payload)
                let echoed = try await client.send(RedisCommand("GET", "big"), as: ByteBuffer.self)
                #expect(echoed.readableBytes == 10 * 1024 * 1024)
                #expect(echoed == payload)
            }
        }
    }

    @Test("status, integer, nil, nested arrays and error replies decode right")
    func replyTypes() async throws {
        try await RedisServer.with { server in
            try await withClient(try testConfiguration(server)) { client in
                #expect(try await client.send("PING") == .status("PONG"))
                #expect(try await client.send("SET", "k", "v") == .status("OK"))
                #expect(try await client.send("GET", "missing") == .null)
                #expect(try await client.send(RedisCommand("GET", "missing"), as: String?.self) == nil)
                #expect(try await client.send("DEL", "k") == .integer(1))
                let nested = try await client.send(
                    "EVAL", "return {1, 'two', {3, {'four', 5}}, redis.error_reply('MYERR boom')}", 0
                )
                #expect(
                    nested
                        == .array([
                            .integer(1), .bulk(ByteBuffer(string: "two")),
                            .array([.integer(3), .array([.bulk(ByteBuffer(string: "four")), .integer(5)])]),
                            .error("MYERR boom"),
                        ])
                )
                #expect(try await client.send("EVAL", "return nil", 0) == .null)
                _ = try await client.send("SET", "text", "x")
                do {
                    _ = try await client.send("INCR", "text")
                    Issue.record("INCR of a string should fail")
                } catch let error as RedisError {
                    #expect(error.code == .reply)
                    #expect(error.message == "ERR value is not an integer or out of range")
                }
                do {
                    _ = try await client.send("LPUSH", "text", "y")
                    Issue.record("LPUSH on a string should fail")
                } catch let error as RedisError {
                    #expect(error.replyPrefix == "WRONGTYPE")
                }
                // The connection survives error replies.
                #expect(try await client.send("PING") == .status("PONG"))
            }
        }
    }

    static let add = RedisFunctionLibrary(
        name: "test",
        lua: """
            redis.register_function('add_' .. VERSION, function(keys, args) return redis.call('INCRBY', keys[1], args[1]) end)
            redis.register_function{ function_name = 'get_' .. VERSION, callback = function(keys) return redis.call('GET', keys[1]) end, flags = { 'no-writes' } }
            """
    )

    @Test("library functions run by name, read-only ones with FCALL_RO, and the library is loaded again after FUNCTION FLUSH")
    func functionsReloadAfterFlush() async throws {
        try await RedisServer.with { server in
            try await withClient(try testConfiguration(server)) { client in
                let library = Self.add
                try await client.load(library)
                #expect(try await client.call(RedisFunctionCall("add", in: library, keys: ["total"], arguments: [5], isReadOnly: false)) == .integer(5))
                _ = try await client.send("FUNCTION", "FLUSH")
                #expect(try await client.send(RedisCommand("FUNCTION", "LIST"), as: [RedisReply].self).isEmpty)
                #expect(try await client.call(RedisFunctionCall("add", in: library, keys: ["total"], arguments: [2], isReadOnly: false)) == .integer(7))
                #expect(try await client.call(RedisFunctionCall("get", in: library, keys: ["total"], arguments: [], isReadOnly: true)).string == "7")
                #expect(try await client.send(RedisCommand("FUNCTION", "LIST"), as: [RedisReply].self).count == 1)
                // Loading the same version again changes nothing.
                try await client.load(library)
            }
        }
    }

    @Test("a Lua error is reported when the library is loaded, and a missing function that no load provides is the caller's error")
    func libraryErrors() async throws {
        try await RedisServer.with { server in
            try await withClient(try testConfiguration(server)) { client in
                let broken = await #expect(throws: RedisError.self) { try await client.load(RedisFunctionLibrary(name: "broken", lua: "return (")) }
                #expect(broken?.code == .reply)
                #expect(broken?.message.contains("Error compiling function") == true)
                // The library loads, but has no such function: the reload does not loop.
                let missing = await #expect(throws: RedisError.self) {
                    try await client.call(RedisFunctionCall("nothing", in: Self.add, keys: [], arguments: [], isReadOnly: false))
                }
                #expect(missing?.message.hasPrefix("ERR Function not found") == true)
            }
        }
    }
}
