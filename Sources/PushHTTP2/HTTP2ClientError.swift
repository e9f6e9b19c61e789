/// Why a request got no HTTP answer, or why an endpoint URL is unusable.
///
/// Errors compare by kind only, whatever their detail. The push clients turn them into their own
/// error types (``kind``, ``detail`` and ``underlying`` are visible to them for that).
public struct HTTP2ClientError: Error, Sendable, CustomStringConvertible, Hashable {
    /// What went wrong, in the terms every push client shares.
    package enum Kind: String, Hashable, Sendable {
        case invalidEndpoint, connectionFailed, timeout, connectionClosed, protocolError
    }

    package let kind: Kind
    package let detail: String?
    // Kept for the description; an `any Error` cannot take part in equality anyway.
    package let underlying: (any Error)?

    private init(_ kind: Kind, _ detail: String? = nil, underlying: (any Error)? = nil) {
        self.kind = kind
        self.detail = detail
        self.underlying = underlying
    }

    /// The endpoint URL is not `https://host[:port]` or `http://host:port`.
    public static let invalidEndpoint = HTTP2ClientError(.invalidEndpoint)
    /// No connection could be opened (refused, unreachable, TLS handshake failed).
    public static let connectionFailed = HTTP2ClientError(.connectionFailed)
    /// No answer came before the request's deadline.
    public static let timeout = HTTP2ClientError(.timeout)
    /// The connection closed before the server answered (or the client was shut down).
    public static let connectionClosed = HTTP2ClientError(.connectionClosed)
    /// The server sent something that is no answer (a reset stream, a bad header).
    public static let protocolError = HTTP2ClientError(.protocolError)

    /// The same kind of error, saying what happened.
    package func with(_ detail: String, underlying: (any Error)? = nil) -> HTTP2ClientError {
        HTTP2ClientError(kind, detail, underlying: underlying)
    }

    /// True when both are the same kind of error; the detail does not count.
    public static func == (lhs: HTTP2ClientError, rhs: HTTP2ClientError) -> Bool {
        lhs.kind == rhs.kind
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(kind)
    }

    public var description: String {
        var text = "HTTP/2 \(kind.rawValue)"
        if let detail { text += ": \(detail)" }
        if let underlying { text += " (\(underlying))" }
        return text
    }
}
