import NIOCore
import NIOEmbedded
import Testing

@testable import RedisClient

@Suite("RedisChannelHandler: pub/sub pushes")
struct RedisChannelHandlerPubSubTests {
    private static func bulk(_ text: String) -> RedisReply { .bulk(ByteBuffer(string: text)) }

    @Test("message, pmessage and smessage go to onPush between the confirmations of a SUBSCRIBE")
    func pushesDoNotConsumeRequests() throws {
        let recorder = PushRecorder()
        let redis = try EmbeddedRedis(onPush: recorder.onPush)
        let subscribe = redis.pipeline([RedisCommand("SUBSCRIBE", "ch", "other")], replyCount: 2)
        #expect(try redis.written() == "*3\r\n$9\r\nSUBSCRIBE\r\n$2\r\nch\r\n$5\r\nother\r\n")

        try redis.receive("*3\r\n$9\r\nsubscribe\r\n$2\r\nch\r\n:1\r\n")
        #expect(subscribe.isPending)

        try redis.receive("*3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$5\r\nhello\r\n")
        try redis.receive("*4\r\n$8\r\npmessage\r\n$3\r\nch*\r\n$4\r\nch:1\r\n$2\r\nhi\r\n")
        try redis.receive("*3\r\n$8\r\nsmessage\r\n$5\r\nshard\r\n$3\r\nyes\r\n")
        #expect(subscribe.isPending)

        try redis.receive("*3\r\n$9\r\nsubscribe\r\n$5\r\nother\r\n:2\r\n")
        #expect(
            subscribe.value == [
                .array([Self.bulk("subscribe"), Self.bulk("ch"), .integer(1)]),
                .array([Self.bulk("subscribe"), Self.bulk("other"), .integer(2)]),
            ]
        )
        #expect(
            recorder.messages == [
                RedisPubSubMessage(channel: "ch", payload: ByteBuffer(string: "hello")),
                RedisPubSubMessage(channel: "ch:1", pattern: "ch*", payload: ByteBuffer(string: "hi")),
                RedisPubSubMessage(channel: "shard", payload: ByteBuffer(string: "yes")),
            ]
        )
        #expect(redis.channel.isActive)
        #expect(try redis.finish())
    }

    @Test("a push with nothing pending is delivered and keeps the connection open")
    func pushWhileIdle() throws {
        let recorder = PushRecorder()
        let redis = try EmbeddedRedis(onPush: recorder.onPush)
        let payload = "a\r\nb"
        try redis.receive("*3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$4\r\n\(payload)\r\n*3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$0\r\n\r\n")
        #expect(recorder.messages.map(\.payload) == [ByteBuffer(string: payload), ByteBuffer()])
        #expect(redis.channel.isActive)
        #expect(try redis.finish())
    }

    @Test("replies that only look like pushes still answer requests")
    func nonPushArrays() throws {
        let recorder = PushRecorder()
        let redis = try EmbeddedRedis(onPush: recorder.onPush)
        let ping = redis.send(RedisCommand("PING"))
        let short = redis.send(RedisCommand("X"))
        let integerPayload = redis.send(RedisCommand("X"))
        _ = try redis.written()
        try redis.receive("*2\r\n$4\r\npong\r\n$0\r\n\r\n")
        try redis.receive("*2\r\n$7\r\nmessage\r\n$2\r\nch\r\n")
        try redis.receive("*3\r\n$7\r\nmessage\r\n$2\r\nch\r\n:1\r\n")
        #expect(ping.value == .array([Self.bulk("pong"), Self.bulk("")]))
        #expect(short.value == .array([Self.bulk("message"), Self.bulk("ch")]))
        #expect(integerPayload.value == .array([Self.bulk("message"), Self.bulk("ch"), .integer(1)]))
        #expect(recorder.messages.isEmpty)
        #expect(try redis.finish())
    }

    @Test("without onPush a message-shaped array is an ordinary reply")
    func noPushHandler() throws {
        let redis = try EmbeddedRedis()
        let range = redis.send(RedisCommand("LRANGE", "l", 0, -1))
        _ = try redis.written()
        try redis.receive("*3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$5\r\nhello\r\n")
        #expect(range.value == .array([Self.bulk("message"), Self.bulk("ch"), Self.bulk("hello")]))
        #expect(try redis.finish())
    }
}
