import NIOCore
import NIOEmbedded
import Testing

@testable import RedisClient

@Suite("RedisChannelHandler: writes, replies and closing")
struct RedisChannelHandlerTests {
    private static func bulk(_ text: String) -> RedisReply { .bulk(ByteBuffer(string: text)) }

    @Test("becomes active however it meets the connected channel", arguments: [EmbeddedRedis.Setup.addThenConnect, .connectThenAdd])
    func becomesActive(setup: EmbeddedRedis.Setup) throws {
        let redis = try EmbeddedRedis(setup)
        let ping = redis.send(RedisCommand("PING"))
        #expect(try redis.written() == "*1\r\n$4\r\nPING\r\n")
        try redis.receive("+PONG\r\n")
        #expect(ping.value == .status("PONG"))
        #expect(try redis.finish())
    }

    @Test("a request before the channel is active fails with .connectionClosed and writes nothing")
    func notYetActive() throws {
        let redis = try EmbeddedRedis(.notConnected)
        let ping = redis.send(RedisCommand("PING"))
        #expect(ping.error?.code == .connectionClosed)
        #expect(try redis.written() == "")
        #expect(try redis.finish())
    }

    @Test("writes are flushed once, on the next event-loop tick")
    func flushIsDeferred() throws {
        let redis = try EmbeddedRedis()
        let first = redis.send(RedisCommand("GET", "a"))
        let second = redis.send(RedisCommand("GET", "b"))
        // Written but not flushed: nothing has reached the wire yet.
        #expect(try redis.channel.readOutbound(as: ByteBuffer.self) == nil)
        redis.loop.run()
        #expect(try redis.channel.readOutbound(as: ByteBuffer.self).map { String(buffer: $0) } == "*2\r\n$3\r\nGET\r\n$1\r\na\r\n")
        #expect(try redis.channel.readOutbound(as: ByteBuffer.self).map { String(buffer: $0) } == "*2\r\n$3\r\nGET\r\n$1\r\nb\r\n")
        #expect(try redis.channel.readOutbound(as: ByteBuffer.self) == nil)
        try redis.receive("$1\r\nA\r\n$-1\r\n")
        #expect(first.value == Self.bulk("A"))
        #expect(second.value == .null)
        #expect(try redis.finish())
    }

    @Test("pipelined requests complete in order: three singles, then a batch of two")
    func pipelining() throws {
        let redis = try EmbeddedRedis()
        let a = redis.send(RedisCommand("GET", "a"))
        let b = redis.send(RedisCommand("GET", "b"))
        let c = redis.send(RedisCommand("GET", "c"))
        let batch = redis.pipeline([RedisCommand("SET", "x", 1), RedisCommand("INCR", "y")])
        #expect(
            try redis.written()
                == "*2\r\n$3\r\nGET\r\n$1\r\na\r\n" + "*2\r\n$3\r\nGET\r\n$1\r\nb\r\n" + "*2\r\n$3\r\nGET\r\n$1\r\nc\r\n"
                + "*3\r\n$3\r\nSET\r\n$1\r\nx\r\n$1\r\n1\r\n" + "*2\r\n$4\r\nINCR\r\n$1\r\ny\r\n"
        )

        try redis.receive("$1\r\nA\r\n")
        #expect(a.value == Self.bulk("A"))
        #expect(b.isPending && c.isPending && batch.isPending)

        // B's reply split across reads, C's and the batch's first in the same read.
        try redis.receive("$1\r")
        #expect(b.isPending)
        try redis.receive("\nB\r\n$1\r\nC\r\n+OK\r\n")
        #expect(b.value == Self.bulk("B"))
        #expect(c.value == Self.bulk("C"))
        #expect(batch.isPending)

        try redis.receive(":5\r\n")
        #expect(batch.value == [.status("OK"), .integer(5)])
        #expect(redis.channel.isActive)
        #expect(try redis.finish())
    }

    @Test("an error reply completes its request with .error and the connection carries on")
    func errorReply() throws {
        let redis = try EmbeddedRedis()
        let bad = redis.send(RedisCommand("NOSUCH"))
        let batch = redis.pipeline([RedisCommand("INCR", "s"), RedisCommand("PING")])
        let good = redis.send(RedisCommand("PING"))
        _ = try redis.written()
        try redis.receive("-ERR unknown command 'NOSUCH'\r\n-WRONGTYPE not an integer\r\n+PONG\r\n+PONG\r\n")
        #expect(bad.value == .error("ERR unknown command 'NOSUCH'"))
        #expect(batch.value == [.error("WRONGTYPE not an integer"), .status("PONG")])
        #expect(good.value == .status("PONG"))
        #expect(redis.channel.isActive)
        #expect(try redis.finish())
    }

    @Test("a reply nobody asked for closes the connection; later requests fail instead of hanging")
    func unsolicitedReply() throws {
        let redis = try EmbeddedRedis()
        try redis.receive("+OK\r\n")
        #expect(!redis.channel.isActive)
        let late = redis.send(RedisCommand("PING"))
        #expect(late.error?.code == .protocolError)
        #expect(try redis.written() == "")
        #expect(try redis.finish())
    }

    @Test("one reply too many completes the pending request, then closes the connection")
    func extraReply() throws {
        let redis = try EmbeddedRedis()
        let ping = redis.send(RedisCommand("PING"))
        _ = try redis.written()
        try redis.receive("+PONG\r\n+EXTRA\r\n")
        #expect(ping.value == .status("PONG"))
        #expect(!redis.channel.isActive)
        #expect(try redis.finish())
    }

    @Test("unparseable bytes fail every pending request with .protocolError and close")
    func protocolError() throws {
        let redis = try EmbeddedRedis()
        let first = redis.send(RedisCommand("GET", "a"))
        let second = redis.pipeline([RedisCommand("GET", "b"), RedisCommand("GET", "c")])
        _ = try redis.written()
        try redis.receive("$1\r\nA\r\n?x\r\n")
        #expect(first.value == Self.bulk("A"))
        #expect(second.error?.code == .protocolError)
        #expect(!redis.channel.isActive)
        #expect(try redis.finish())
    }

    @Test("closing fails every pending request with .connectionClosed")
    func closeFailsPending() throws {
        let redis = try EmbeddedRedis()
        let a = redis.send(RedisCommand("GET", "a"))
        let b = redis.send(RedisCommand("GET", "b"))
        let batch = redis.pipeline([RedisCommand("GET", "c"), RedisCommand("GET", "d")])
        _ = try redis.written()
        try redis.receive("*2\r\n")  // half of a reply: nothing completes
        try redis.channel.close().wait()
        for error in [a.error, b.error, batch.error] {
            #expect(error?.code == .connectionClosed)
        }
        #expect(try redis.finish())
    }

    @Test("channelInactive alone fails every pending request with .connectionClosed")
    func inactiveFailsPending() throws {
        let redis = try EmbeddedRedis()
        let a = redis.send(RedisCommand("GET", "a"))
        let batch = redis.pipeline([RedisCommand("GET", "b")])
        _ = try redis.written()
        redis.channel.pipeline.fireChannelInactive()
        #expect(a.error?.code == .connectionClosed)
        #expect(batch.error?.code == .connectionClosed)
        let late = redis.send(RedisCommand("PING"))
        #expect(late.error?.code == .connectionClosed)
        #expect(try redis.finish())
    }

    @Test("a request enqueued after close fails at once and writes nothing")
    func enqueueAfterClose() throws {
        let redis = try EmbeddedRedis()
        try redis.channel.close().wait()
        let single = redis.send(RedisCommand("PING"))
        let batch = redis.pipeline([RedisCommand("PING")])
        #expect(single.error?.code == .connectionClosed)
        #expect(batch.error?.code == .connectionClosed)
        #expect(try redis.written() == "")
        #expect(try redis.finish())
    }

    @Test("an error in the pipeline fails pending requests with .connectionClosed and its cause, and closes")
    func errorCaught() throws {
        struct Reset: Error {}
        let redis = try EmbeddedRedis()
        let ping = redis.send(RedisCommand("PING"))
        _ = try redis.written()
        redis.channel.pipeline.fireErrorCaught(Reset())
        #expect(ping.error?.code == .connectionClosed)
        #expect(ping.error?.underlying is Reset)
        #expect(!redis.channel.isActive)
        #expect(try redis.finish())
    }
}
