public import NIOCore

/// A message published on a channel this client subscribed to.
public struct RedisPubSubMessage: Sendable, Hashable {
    /// The channel the message was published on.
    public var channel: String
    /// The pattern that matched, for `PSUBSCRIBE` subscriptions.
    public var pattern: String?
    /// The published bytes, untouched.
    public var payload: ByteBuffer

    /// Creates a message.
    public init(channel: String, pattern: String? = nil, payload: ByteBuffer) {
        self.channel = channel
        self.pattern = pattern
        self.payload = payload
    }

    /// Recognises the RESP2 push arrays `message`, `smessage` and `pmessage`.
    ///
    /// On a subscribed connection these arrive between ordinary replies; anything else is a reply.
    init?(pushReply elements: [RedisReply]) {
        guard case .bulk(let kind) = elements.first else { return nil }
        let view = kind.readableBytesView
        if elements.count == 3, view.elementsEqual("message".utf8) || view.elementsEqual("smessage".utf8),
            case .bulk(let channel) = elements[1], case .bulk(let payload) = elements[2]
        {
            self.init(channel: String(buffer: channel), payload: payload)
        } else if elements.count == 4, view.elementsEqual("pmessage".utf8),
            case .bulk(let pattern) = elements[1], case .bulk(let channel) = elements[2],
            case .bulk(let payload) = elements[3]
        {
            self.init(channel: String(buffer: channel), pattern: String(buffer: pattern), payload: payload)
        } else {
            return nil
        }
    }
}
