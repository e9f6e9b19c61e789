import NIOCore
import NIOEmbedded
import Testing

@testable import RedisClient

@Suite("RedisChannelHandler: deadlines")
struct RedisChannelHandlerTimeoutTests {
    @Test("past the oldest request's deadline every pending request fails with .timeout and the channel closes")
    func timeoutFailsAll() throws {
        let redis = try EmbeddedRedis()
        let a = redis.send(RedisCommand("GET", "a"), timeout: .seconds(1))
        let b = redis.send(RedisCommand("GET", "b"), timeout: .seconds(1))
        let batch = redis.pipeline([RedisCommand("GET", "c"), RedisCommand("GET", "d")], timeout: .seconds(30))
        _ = try redis.written()

        redis.loop.advanceTime(by: .milliseconds(999))
        #expect(a.isPending && b.isPending && batch.isPending)
        #expect(redis.channel.isActive)

        redis.loop.advanceTime(by: .milliseconds(1))
        for error in [a.error, b.error, batch.error] {
            #expect(error?.code == .timeout)
        }
        #expect(a.error?.message.contains("GET") == true)
        #expect(!redis.channel.isActive)

        let late = redis.send(RedisCommand("PING"))
        #expect(!late.isPending)
        #expect(try redis.finish())
    }

    @Test("answered requests never time out")
    func answeredInTime() throws {
        let redis = try EmbeddedRedis()
        let a = redis.send(RedisCommand("GET", "a"), timeout: .seconds(1))
        _ = try redis.written()
        try redis.receive("$-1\r\n")
        redis.loop.advanceTime(by: .seconds(60))
        #expect(a.value == .null)
        #expect(redis.channel.isActive)
        #expect(try redis.finish())
    }

    @Test("when the oldest is answered the timer re-arms for the next request's own deadline")
    func reArmsForNextRequest() throws {
        let redis = try EmbeddedRedis()
        let a = redis.send(RedisCommand("GET", "a"), timeout: .seconds(1))
        let b = redis.send(RedisCommand("GET", "b"), timeout: .seconds(5))
        _ = try redis.written()
        try redis.receive("$1\r\nA\r\n")
        #expect(a.value == .bulk(ByteBuffer(string: "A")))

        redis.loop.advanceTime(by: .seconds(2))
        #expect(b.isPending)
        #expect(redis.channel.isActive)

        redis.loop.advanceTime(by: .milliseconds(2_999))
        #expect(b.isPending)
        redis.loop.advanceTime(by: .milliseconds(1))
        #expect(b.error?.code == .timeout)
        #expect(!redis.channel.isActive)
        #expect(try redis.finish())
    }

    @Test("a short deadline after an answered long one is kept")
    func shortAfterAnsweredLong() throws {
        let redis = try EmbeddedRedis()
        let long = redis.send(RedisCommand("GET", "slow"), timeout: .seconds(30))
        _ = try redis.written()
        try redis.receive("+OK\r\n")
        #expect(long.value == .status("OK"))

        let ping = redis.send(RedisCommand("PING"), timeout: .seconds(1))
        _ = try redis.written()
        redis.loop.advanceTime(by: .seconds(1))
        #expect(ping.error?.code == .timeout)
        #expect(!redis.channel.isActive)
        #expect(try redis.finish())
    }

    @Test("a short deadline queued behind a long one is kept once the long one is answered")
    func shortBehindLong() throws {
        let redis = try EmbeddedRedis()
        let long = redis.send(RedisCommand("GET", "slow"), timeout: .seconds(30))
        let ping = redis.send(RedisCommand("PING"), timeout: .seconds(2))
        _ = try redis.written()
        redis.loop.advanceTime(by: .seconds(1))
        try redis.receive("+OK\r\n")
        #expect(long.value == .status("OK"))
        #expect(ping.isPending)

        redis.loop.advanceTime(by: .seconds(1))
        #expect(ping.error?.code == .timeout)
        #expect(!redis.channel.isActive)
        #expect(try redis.finish())
    }

    @Test("closing cancels the timer: nothing fires afterwards")
    func closeCancelsTimer() throws {
        let redis = try EmbeddedRedis()
        let a = redis.send(RedisCommand("GET", "a"), timeout: .seconds(1))
        _ = try redis.written()
        try redis.channel.close().wait()
        #expect(a.error?.code == .connectionClosed)
        redis.loop.advanceTime(by: .seconds(5))
        #expect(a.error?.code == .connectionClosed)
        #expect(try redis.finish())
    }
}
