public import NIOCore
public import NIOHPACK

/// A server's answer to one request: any status, since the caller decides what it means.
public struct HTTP2Response: Sendable {
    /// The HTTP status.
    public var status: Int
    /// The final response head, `:status` included.
    public var headers: HPACKHeaders
    /// The body, when there was one; only its first 64 KiB are kept.
    public var body: ByteBuffer?

    /// Creates a response.
    public init(status: Int, headers: HPACKHeaders = [:], body: ByteBuffer? = nil) {
        self.status = status
        self.headers = headers
        self.body = body
    }
}
