import NIOCore
import NIOEmbedded

@testable import RedisClient

/// A ``RedisChannelHandler`` on an `EmbeddedChannel`: enqueue requests, read the bytes written,
/// feed canned replies. Time only moves through ``loop``.
///
/// Not `Sendable`: an `EmbeddedEventLoop` must stay on the thread that made it, so tests using
/// this are synchronous.
final class EmbeddedRedis {
    /// How the handler meets an active channel.
    enum Setup {
        /// The handler is added first and sees `channelActive` when the channel connects.
        case addThenConnect
        /// The channel connects first; the handler finds it active in `handlerAdded`.
        case connectThenAdd
        /// The channel never connects.
        case notConnected
    }

    let channel: EmbeddedChannel
    let handler: RedisChannelHandler
    var loop: EmbeddedEventLoop { channel.embeddedEventLoop }

    init(_ setup: Setup = .addThenConnect, onPush: (@Sendable (RedisPubSubMessage) -> Void)? = nil) throws {
        channel = EmbeddedChannel()
        handler = RedisChannelHandler(allocator: channel.allocator, endpointDescription: "redis.test:6379", onPush: onPush)
        let address = try SocketAddress(ipAddress: "127.0.0.1", port: 6379)
        switch setup {
        case .addThenConnect:
            try channel.pipeline.syncOperations.addHandler(handler)
            try channel.connect(to: address).wait()
        case .connectThenAdd:
            try channel.connect(to: address).wait()
            try channel.pipeline.syncOperations.addHandler(handler)
        case .notConnected:
            try channel.pipeline.syncOperations.addHandler(handler)
        }
    }

    /// Enqueues one command expecting one reply, due `timeout` from the loop's current time.
    func send(_ command: RedisCommand, timeout: TimeAmount = .seconds(10)) -> Probe<RedisReply> {
        let probe = Probe<RedisReply>(on: loop)
        handler.enqueue(
            RedisRequest(
                name: command.name,
                bytes: command.encoded,
                replyCount: 1,
                deadline: loop.now + timeout,
                completion: .single(probe.promise)
            )
        )
        return probe
    }

    /// Enqueues several commands as one request, expecting `replyCount` replies (one per command
    /// unless given, as for `SUBSCRIBE a b`).
    func pipeline(_ commands: [RedisCommand], replyCount: Int? = nil, timeout: TimeAmount = .seconds(10)) -> Probe<[RedisReply]> {
        let probe = Probe<[RedisReply]>(on: loop)
        var bytes = channel.allocator.buffer(capacity: 64)
        for command in commands {
            bytes.writeImmutableBuffer(command.encoded)
        }
        handler.enqueue(
            RedisRequest(
                name: commands.first?.name ?? "",
                bytes: bytes,
                replyCount: replyCount ?? commands.count,
                deadline: loop.now + timeout,
                completion: .batch(probe.promise)
            )
        )
        return probe
    }

    /// Runs pending event-loop tasks (the handler's deferred flush) and returns every byte written
    /// since the last call, as text.
    func written() throws -> String {
        loop.run()
        var bytes: [UInt8] = []
        while let buffer = try channel.readOutbound(as: ByteBuffer.self) {
            bytes += buffer.readableBytesView
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Delivers bytes from the "server".
    func receive(_ resp: String) throws {
        try channel.writeInbound(ByteBuffer(string: resp))
    }

    /// Closes the channel (if still open) and reports whether nothing was left unread.
    func finish() throws -> Bool {
        try channel.finish(acceptAlreadyClosed: true).isClean
    }
}
