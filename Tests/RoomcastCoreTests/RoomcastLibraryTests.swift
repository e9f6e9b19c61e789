import Foundation
import NIOCore
import RoomcastTestSupport
import Testing

@testable import RedisClient
@testable import RoomcastCore

/// The library of Redis Functions and its Swift declarations (`RoomcastFunctions`): each
/// declaration against its Lua file's header and the Lua's own `unpack` lines, so a function
/// called with keys or arguments in another order, or read by a field it does not answer, fails
/// here rather than against a production Redis.
@Suite("RoomcastLibrary")
struct RoomcastLibraryTests {
    /// A function as its Swift declaration names it.
    struct Signature: Equatable, CustomStringConvertible {
        var name: String
        var isReadOnly: Bool
        /// Names, `?` after an optional one.
        var keys: [String]
        /// Names, `…` after the variadic last one.
        var arguments: [String]
        /// Field names, `?` after an optional one.
        var reply: [String]

        var description: String {
            "\(name)\(isReadOnly ? " (read)" : ""): KEYS \(keys) ARGV \(arguments) REPLY \(reply)"
        }
    }

    static func declared<Function: RoomcastFunction>(_ function: Function.Type) -> Signature {
        Signature(
            name: Function.name,
            isReadOnly: Function.isReadOnly,
            keys: Function.keys.map { $0.name + ($0.isOptional ? "?" : "") },
            arguments: Function.arguments.map { $0.name + ($0.isVariadic ? "…" : "") },
            reply: Function.Reply.Field.allCases.map { $0.rawValue + ($0.isOptional ? "?" : "") }
        )
    }

    /// What a Lua function file says of itself: its header, its registration and its `unpack` lines.
    struct LuaFile {
        var header: Signature
        /// The locals `unpack(keys)` fills, `_` for a key it does not use.
        var keyLocals: [String]
        /// The locals `unpack(args)` (or `unpack(args, 1, n)`) fills.
        var argumentLocals: [String]
        /// `n` of `unpack(args, 1, n)`, when there.
        var argumentCount: Int?

        init(name: String, source: String) throws {
            header = Signature(name: "", isReadOnly: false, keys: [], arguments: [], reply: [])
            keyLocals = []
            argumentLocals = []
            for line in source.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
                if let match = line.firstMatch(of: /^-- KEYS\[(\d+)\]\s+(\w+\??)/) {
                    #expect(Int(match.1) == header.keys.count + 1, "\(name): KEYS[\(match.1)] out of order")
                    header.keys.append(String(match.2))
                } else if let match = line.firstMatch(of: /^-- ARGV\[(\d+)(…?)\]\s+(\w+)/) {
                    #expect(Int(match.1) == header.arguments.count + 1, "\(name): ARGV[\(match.1)] out of order")
                    header.arguments.append(String(match.3) + String(match.2))
                } else if let match = line.firstMatch(of: /^-- REPLY\s+(.+)$/) {
                    header.reply = match.1.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
                } else if let match = line.firstMatch(of: /^register_(write|read)\('(\w+)'/) {
                    header.name = String(match.2)
                    header.isReadOnly = match.1 == "read"
                } else if let match = line.firstMatch(of: /^\s+local ([\w, ]+) = unpack\(keys\)$/) {
                    keyLocals = match.1.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
                } else if let match = line.firstMatch(of: /^\s+local ([\w, ]+) = unpack\(args(?:, 1, (\d+))?\)$/) {
                    argumentLocals = match.1.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
                    argumentCount = match.2.flatMap { Int($0) }
                }
            }
        }
    }

    static let scripts = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../Sources/RoomcastCore/Scripts").standardizedFileURL

    @Test("every Lua function file has one declaration, and every declaration a file")
    func everyFileDeclared() throws {
        let files = try FileManager.default.contentsOfDirectory(atPath: Self.scripts.path)
        let functions = files.filter { $0.hasSuffix(".lua") && !$0.hasPrefix("_") }.map { String($0.dropLast(4)) }
        let declared = RoomcastLibrary.functions.map { Self.declared($0).name }
        #expect(functions.count >= 28)
        #expect(declared.sorted() == functions.sorted())
        #expect(Set(declared).count == declared.count)
        // The helpers the library puts first are every `_*.lua` file.
        #expect(RoomcastLibrary.helpers.sorted() == files.filter { $0.hasPrefix("_") && $0.hasSuffix(".lua") }.map { String($0.dropLast(4)) }.sorted())
    }

    @Test("each declaration names the keys, arguments and reply fields of its Lua header, in order, and the Lua reads them so")
    func declarationsMatchHeaders() throws {
        for function in RoomcastLibrary.functions {
            let declared = Self.declared(function)
            let file = try LuaFile(name: declared.name, source: RoomcastLibrary.source(declared.name))
            #expect(file.header == declared, "header of \(declared.name).lua:\n  \(file.header)\ndeclared:\n  \(declared)")
            // The Lua takes its keys by the header's names ('_' for one it does not use)…
            let keyNames = declared.keys.map { $0.hasSuffix("?") ? String($0.dropLast()) : $0 }
            #expect(file.keyLocals.count == keyNames.count, "\(declared.name): unpack(keys) fills \(file.keyLocals), KEYS are \(keyNames)")
            for (local, name) in zip(file.keyLocals, keyNames) where local != "_" {
                #expect(local == name, "\(declared.name): KEYS \(name) is read into \(local)")
            }
            // …and its fixed arguments likewise; the variadic rest from after them.
            let fixed = declared.arguments.filter { !$0.hasSuffix("…") }
            #expect(file.argumentLocals == fixed, "\(declared.name): unpack(args) fills \(file.argumentLocals), ARGV are \(declared.arguments)")
            if fixed.count < declared.arguments.count {
                #expect(file.argumentCount == fixed.count, "\(declared.name): a variadic function unpacks exactly its fixed arguments")
            } else {
                #expect(file.argumentCount == nil || file.argumentCount == fixed.count)
            }
        }
    }

    @Test("only the last keys are optional and only the last argument variadic")
    func optionalAndVariadicAtTheEnd() {
        for function in RoomcastLibrary.functions {
            let declared = Self.declared(function)
            let firstOptional = declared.keys.firstIndex { $0.hasSuffix("?") } ?? declared.keys.endIndex
            #expect(declared.keys[firstOptional...].allSatisfy { $0.hasSuffix("?") }, "\(declared)")
            #expect(declared.arguments.dropLast().allSatisfy { !$0.hasSuffix("…") }, "\(declared)")
        }
    }

    @Test("the committed changes, whose replies wait for durable acks, are the changes clients are answered about, and no read")
    func committedChanges() {
        let committed = Set(RoomcastLibrary.functions.filter { $0.isCommittedChange }.map { $0.name })
        #expect(
            committed == [
                "room_create", "room_rename", "message_send", "element_create", "element_update", "element_transform", "element_front",
                "element_delete", "room_clear", "reaction_toggle",
            ]
        )
        #expect(RoomcastLibrary.functions.allSatisfy { !($0.isReadOnly && $0.isCommittedChange) })
    }

    @Test("a call is built from its declaration: FCALL or FCALL_RO, the versioned name, the keys and arguments in order")
    func callShape() throws {
        let room = RoomID("r1")!, user = UserID("u1")!
        let call = RoomcastFunctions.ElementsSnapshot(room: room, user: user).call()
        #expect(call.isReadOnly)
        #expect(call.command.keys == ["room:{r1}", "room:{r1}:participants", "room:{r1}:z", "room:{r1}:stream", "room:{r1}:events", "room:{r1}:profiles"])
        #expect(call.command.words.map { String(buffer: $0) } == ["FCALL_RO", "elements_snapshot_\(RoomcastLibrary.library.version)", "6"] + call.command.keys + ["u1", "room:{r1}:element:"])

        // An optional key left out, a flag, a variadic rest.
        let send = RoomcastFunctions.MessageSend(
            room: room, sender: user, message: MessageID("m1")!, text: "hi", now: Timestamp(milliseconds: 5), frame: try RoomEventFrame(event: "message:new", object: ByteBuffer(string: "{}")),
            json: ByteBuffer(string: "{}"), eventsKept: 7, messagesKept: 9, request: nil
        ).call()
        #expect(!send.isReadOnly && send.command.name == "FCALL")
        #expect(send.command.keys.count == 7)
        // The message's JSON goes with a request key alone.
        #expect(send.command.words.dropFirst(10).map { String(buffer: $0) } == ["5", "7", "u1", "m1", "hi", #"42["message:new",{"offset":""#, "9"])
        let retried = RoomcastFunctions.MessageSend(
            room: room, sender: user, message: MessageID("m1")!, text: "hi", now: Timestamp(milliseconds: 5), frame: try RoomEventFrame(event: "message:new", object: ByteBuffer(string: "{}")),
            json: ByteBuffer(string: "{}"), eventsKept: 7, messagesKept: 9, request: RequestID("q1")
        ).call()
        #expect(retried.command.keys.count == 8)
        #expect(retried.command.words.dropFirst(11).map { String(buffer: $0) } == ["5", "7", "u1", "m1", "hi", #"42["message:new",{"offset":""#, "9", "{}"])
        let update = RoomcastFunctions.ElementUpdate(
            room: room, element: ElementID("e1")!, user: user, now: Timestamp(milliseconds: 5), eventsKept: 7, toFront: true, answerElement: false,
            fields: ["positionX", "1.5"]
        ).call()
        #expect(update.command.words.suffix(9).map { String(buffer: $0) } == ["u1", "e1", "r1", "5", "7", "1", "0", "positionX", "1.5"])
    }

    @Test("the library loads into a fresh Redis, each function registered under its versioned name, read-only ones no-writes")
    func loadsIntoFreshRedis() async throws {
        try await withTestRedis { redis, server in
            let library = RoomcastLibrary.library
            try await redis.load(library)
            for listing in try await server.onEveryServer({ try await $0.send(RedisCommand("FUNCTION", "LIST", "LIBRARYNAME", library.name)) }) {
                let libraries = try [RedisReply](redisReply: listing)
                #expect(libraries.count == 1)
                let entry = try Self.pairs(try #require(libraries.first))
                #expect(entry["library_name"]?.string == library.name)
                var registered: [String: Bool] = [:]
                let functions = try #require(entry["functions"])
                for function in try [RedisReply](redisReply: functions) {
                    let fields = try Self.pairs(function)
                    let flags = (try? [String](redisReply: fields["flags"] ?? .null)) ?? []
                    registered[try #require(fields["name"]?.string)] = flags.contains("no-writes")
                }
                let expected = Dictionary(uniqueKeysWithValues: RoomcastLibrary.functions.map { function in
                    let declared = Self.declared(function)
                    return (library.registeredName(of: declared.name), declared.isReadOnly)
                })
                #expect(registered == expected)
            }
        }
    }

    @Test("loading is a real Lua check: a broken library is refused")
    func brokenLibraryRefused() async throws {
        try await withTestRedis { redis, _ in
            let error = await #expect(throws: RedisError.self) {
                try await redis.load(RedisFunctionLibrary(name: "broken", lua: "if then return end end"))
            }
            #expect(error?.code == .reply)
        }
    }

    @Test("the stores keep working after FUNCTION FLUSH: the library is loaded again where it went missing")
    func surviveFunctionFlush() async throws {
        try await withTestRedis { redis, server in
            try await redis.load(RoomcastLibrary.library)
            let users = UserStore(redis: redis)
            let alice = try await users.create(username: "alice", passwordHash: "h", displayName: nil)
            let bob = try await users.create(username: "bob", passwordHash: "h", displayName: nil)
            let rooms = RoomStore(redis: redis)
            let messages = MessageStore(redis: redis)
            let first = try await rooms.create(by: alice.id, with: [bob.id], name: nil)
            _ = try await messages.send("before", from: alice, to: first.id)

            _ = try await server.onEveryServer { try await $0.send("FUNCTION", "FLUSH") }
            #expect(try await server.onEveryServer { try await $0.send(RedisCommand("FUNCTION", "LIST"), as: [RedisReply].self).count } == server.servers.map { _ in 0 })

            let second = try await rooms.create(by: bob.id, with: [alice.id], name: "again")
            let sent = try await messages.send("after", from: bob, to: second.id)
            #expect(try await rooms.room(second.id)?.name == "again")
            #expect(sent.message.text == "after")
            // Errors raised in a function still map to domain codes after the reload.
            _ = try await server.onEveryServer { try await $0.send("FUNCTION", "FLUSH") }
            await expectRoomcastError(.notFound) { try await messages.send("x", from: bob, to: .random()) }
        }
    }

    /// A rolling upgrade: nodes of two versions share one Redis, each with its own library.
    @Test("two versions of the library live side by side: loading one replaces none of the other's functions")
    func versionsSideBySide() async throws {
        try await withTestRedis { redis, server in
            let current = RoomcastLibrary.library
            // Another build: any change to the Lua is another version.
            let next = RedisFunctionLibrary(name: current.baseName, lua: RoomcastLibrary.helpers.map(RoomcastLibrary.source).joined(separator: "\n")
                + "\n" + RoomcastLibrary.functions.map { RoomcastLibrary.source(Self.declared($0).name) }.joined(separator: "\n") + "\n-- next\n")
            #expect(next.version != current.version)
            #expect(next.name != current.name)
            try await redis.load(current)
            try await redis.load(next)
            let listed = try await server.onEveryServer { try await $0.send(RedisCommand("FUNCTION", "LIST", "LIBRARYNAME", "roomcast_*"), as: [RedisReply].self).count }
            #expect(listed.allSatisfy { $0 == 2 })

            let users = UserStore(redis: redis)
            let alice = try await users.create(username: "alice", passwordHash: "h", displayName: nil)
            let room = try await RoomStore(redis: redis).create(by: alice.id, with: [], name: nil)
            for library in [current, next] {
                let reply = try await redis.call(RoomcastFunctions.ElementsSnapshot(room: room.id, user: alice.id).call(in: library))
                #expect(reply == .array([.bulk(ByteBuffer(string: "offset")), .bulk(ByteBuffer(string: "0-0")), .bulk(ByteBuffer(string: "elements")), .bulk(ByteBuffer(string: "[]"))]))
            }
        }
    }

    /// A retry of a per-user event whose first try ran but lost its reply (Redis died after it)
    /// must not append and publish the frame again: its client would get it twice
    /// (`tests/e2e/test_redis_crash_user_events.py` saw it once).
    @Test("user_event_publish: a retry finds its frame among the last entries and appends nothing; a first try always appends")
    func userEventRetryIsIdempotent() async throws {
        try await withTestRedis { redis, _ in
            let user = UserID("u-retry")!
            let stream = RedisKeys.userStream(user)
            let first = ByteBuffer(string: #"42["room:seen",{"roomId":"r1","unseenCount":0}]"#)
            let second = ByteBuffer(string: #"42["room:seen",{"roomId":"r2","unseenCount":0}]"#)
            func publish(_ frame: ByteBuffer, retry: Bool) async throws -> String {
                let reply = try await redis.call(RoomcastFunctions.UserEventPublish(user: user, routing: NodeEventRouting(isCluster: redis.configuration.isCluster), frame: frame, isRetry: retry).call())
                return try NamedReply<Offset>(reply, of: "user_event_publish").string(.offset)
            }
            let offset = try await publish(first, retry: false)
            #expect(try await publish(first, retry: true) == offset)
            #expect(try await redis.send(RedisCommand("XLEN", stream), as: Int.self) == 1)
            // Not appended before: a retry appends it.
            let other = try await publish(second, retry: true)
            #expect(other != offset)
            // A first try is a new event, even with the same bytes (another change's).
            #expect(try await publish(first, retry: false) != offset)
            #expect(try await redis.send(RedisCommand("XLEN", stream), as: Int.self) == 3)
        }
    }

    enum Offset: String, ReplyField { case offset }

    /// A flat `[name, value …]` reply (FUNCTION LIST's) by name.
    static func pairs(_ reply: RedisReply) throws -> [String: RedisReply] {
        let elements = try [RedisReply](redisReply: reply)
        var pairs: [String: RedisReply] = [:]
        for index in stride(from: 0, to: elements.count - 1, by: 2) {
            if let name = elements[index].string { pairs[name] = elements[index + 1] }
        }
        return pairs
    }
}
