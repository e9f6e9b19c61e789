public import NIOCore

/// One push: the body of `messages:send`, `{"message":{"token":…,"notification":…,…}}`,
/// already encoded by the caller and sent as is.
public struct FCMRequest: Sendable {
    /// The JSON body.
    public var body: ByteBuffer

    /// Creates a request.
    public init(body: ByteBuffer) {
        self.body = body
    }
}
