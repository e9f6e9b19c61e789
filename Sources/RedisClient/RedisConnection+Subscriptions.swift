import NIOCore

extension RedisConnection {
    /// Writes `verb channel` once per channel, in one write, and completes when Redis confirmed
    /// them all. Channels are sharded (`SSUBSCRIBE`, `SUNSUBSCRIBE`) in both modes: messages
    /// published with `SPUBLISH` reach only sharded subscribers, and the scripts publish that way.
    /// - Parameters:
    ///   - verb: `SSUBSCRIBE` or `SUNSUBSCRIBE`.
    ///   - kind: the confirmation's first word, `ssubscribe` or `sunsubscribe`.
    func write(_ verb: String, confirmedAs kind: String, _ channels: [String], deadline: NIODeadline) -> EventLoopFuture<Void> {
        var bytes = ByteBufferAllocator().buffer(capacity: 64 * channels.count)
        for channel in channels {
            bytes.writeImmutableBuffer(RedisCommand(verb, channel).encoded)
        }
        return submit(name: verb, bytes: bytes, replyCount: channels.count, deadline: deadline).confirming(kind)
    }
}

extension EventLoopFuture where Value == [RedisReply] {
    /// Succeeds when every reply is a confirmation of `kind` (`ssubscribe`, `sunsubscribe`); an
    /// error reply (`MOVED` ...) fails it as ``RedisError/Code/reply``.
    func confirming(_ kind: String) -> EventLoopFuture<Void> {
        flatMapThrowing { replies in
            for reply in replies {
                guard case .array(let elements) = reply, elements.first?.string == kind else {
                    throw RedisError.unexpected(reply, expected: "a \(kind) confirmation")
                }
            }
        }
    }
}
