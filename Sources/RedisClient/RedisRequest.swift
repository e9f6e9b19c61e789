import NIOCore

/// Bytes to write and what to do with the replies they produce.
///
/// One request may expect several replies: a pipeline, or `SUBSCRIBE a b c` which Redis confirms
/// once per channel.
struct RedisRequest: Sendable {
    enum Completion: Sendable {
        case single(EventLoopPromise<RedisReply>)
        case batch(EventLoopPromise<[RedisReply]>)
    }

    /// The command name (or the first one of a pipeline), for error messages.
    var name: String
    var bytes: ByteBuffer
    var replyCount: Int
    var deadline: NIODeadline
    var completion: Completion

    func fail(_ error: RedisError) {
        switch completion {
        case .single(let promise): promise.fail(error)
        case .batch(let promise): promise.fail(error)
        }
    }
}
