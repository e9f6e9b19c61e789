import RedisClient
import RoomcastCore
import RoomcastTestSupport
import Testing

@Suite("RoomcastError from RedisError")
struct RoomcastErrorRedisTests {
    @Test(
        "script refusals map by their first word and keep the rest as the message",
        arguments: [
            ("FORBIDDEN not a participant of this room", RoomcastError.Code.forbidden, "not a participant of this room"),
            ("NOT_FOUND room not found", .notFound, "room not found"),
            ("CONFLICT room r1 exists", .conflict, "room r1 exists"),
            ("INVALID text too long", .invalidPayload, "text too long"),
        ]
    )
    func domainPrefixes(reply: String, code: RoomcastError.Code, message: String) {
        let error = RoomcastError(RedisError(.reply, reply))
        #expect(error.code == code)
        #expect(error.message == message)
    }

    @Test(
        "other error replies are internal and do not leak Redis's text",
        arguments: [
            "ERR unknown command 'FOO'", "WRONGTYPE Operation against a key holding the wrong kind of value",
            "NOSCRIPT No matching script", "forbidden lower case", "FORBIDDENX no", "OOMX", "",
        ]
    )
    func otherReplies(reply: String) {
        let error = RoomcastError(RedisError(.reply, reply))
        #expect(error.code == .internalError)
        #expect(!reply.isEmpty ? !error.message.contains(reply) : true)
    }

    @Test(
        "connection failures and timeouts mean unavailable",
        arguments: [RedisError.Code.timeout, .connectionClosed, .connectionFailed, .clientShutdown]
    )
    func unavailable(code: RedisError.Code) {
        #expect(RoomcastError(RedisError(code, "FORBIDDEN looks like a reply but is not")).code == .unavailable)
    }

    @Test(
        "a Redis starting up, failing over or resharding means unavailable, not internal",
        arguments: [
            "LOADING Redis is loading the dataset in memory", "CLUSTERDOWN The cluster is down",
            "TRYAGAIN Multiple keys request during rehashing of slot", "MASTERDOWN Link with MASTER is down",
            "OOM command not allowed when used memory > 'maxmemory'.",
            "MOVED 3999 127.0.0.1:6381", "ASK 3999 127.0.0.1:6381",
            "ERR Script attempted to access a non local key in a cluster node script: abc, on @user_script:1.",
        ]
    )
    func transientReplies(reply: String) {
        let error = RoomcastError(RedisError(.reply, reply))
        #expect(error.code == .unavailable)
        #expect(!error.message.contains(reply))
    }

    @Test("a change the master applied but no replica confirmed in time (durable acks) is unavailable, retried with its requestId")
    func notReplicated() {
        let error = RoomcastError(RedisError(.notReplicated, "127.0.0.1:7000 applied EVALSHA, but 0 of the 1 replicas asked for confirmed it within 500 ms"))
        #expect(error.code == .unavailable)
        #expect(error.message.contains("replica") && error.message.contains("requestId"))
    }

    @Test("other client failures are internal", arguments: [RedisError.Code.unexpectedReply, .protocolError, .invalidURL, .invalidConfiguration])
    func otherFailures(code: RedisError.Code) {
        #expect(RoomcastError(RedisError(code, "something")).code == .internalError)
    }

    @Test("a full Redis (maxmemory, noeviction) refuses writes as unavailable; reads and, once it has room, writes go on")
    func fullRedis() async throws {
        try await withTestRedis { redis, server in
            let f = try await MessageStoreTests.fixture(redis)
            let store = MessageStore(redis: redis)
            _ = try await server.onEveryServer { try await $0.send(RedisCommand("CONFIG", "SET", "maxmemory-policy", "noeviction", "maxmemory", "1")) }
            let refused = await #expect(throws: RoomcastError.self) { try await store.send("hello", from: f.alice, to: f.room.id) }
            #expect(refused?.code == .unavailable)
            #expect(try await RoomStore(redis: redis).room(f.room.id) != nil)
            _ = try await server.onEveryServer { try await $0.send(RedisCommand("CONFIG", "SET", "maxmemory", "0")) }
            #expect(try await store.send("hello", from: f.alice, to: f.room.id).message.text == "hello")
        }
    }
}
