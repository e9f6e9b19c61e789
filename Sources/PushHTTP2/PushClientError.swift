/// The service a ``PushClientError`` comes from, which names it in descriptions.
public protocol PushErrorDomain: Sendable {
    /// `APNs`, `FCM`, `HTTP/2`.
    static var name: String { get }
}

/// Why a push got no answer, or why a client could not be set up: one type per service
/// (``HTTP2ClientError`` for the transport, `APNsError`, `FCMError`), sharing the transport's
/// kinds, each service adding its own in a constrained extension.
///
/// Errors compare by kind only, whatever their detail, so callers match them like cases:
/// `catch let error where error == .timeout`. ``description`` says what happened.
public struct PushClientError<Domain: PushErrorDomain>: Error, Sendable, CustomStringConvertible, Hashable {
    private let kind: String
    private let detail: String?
    // Kept for the description; an `any Error` cannot take part in equality anyway.
    private let underlying: (any Error)?

    /// An error of `kind` (a name, `connectionFailed`); services declare theirs as static members.
    package init(kind: String, detail: String? = nil, underlying: (any Error)? = nil) {
        self.kind = kind
        self.detail = detail
        self.underlying = underlying
    }

    /// Another service's error (the transport's, say) as the same kind of this one, with its detail.
    package init<Other>(_ other: PushClientError<Other>) {
        self.init(kind: other.kind, detail: other.detail, underlying: other.underlying)
    }

    /// The endpoint URL is not `https://host[:port]` or `http://host:port`.
    public static var invalidEndpoint: Self { Self(kind: "invalidEndpoint") }
    /// No connection could be opened (refused, unreachable, TLS handshake failed).
    public static var connectionFailed: Self { Self(kind: "connectionFailed") }
    /// No answer came before the request's deadline.
    public static var timeout: Self { Self(kind: "timeout") }
    /// The connection closed before the server answered (or the client was shut down).
    public static var connectionClosed: Self { Self(kind: "connectionClosed") }
    /// The server sent something that is no answer (a reset stream, a bad header).
    public static var protocolError: Self { Self(kind: "protocolError") }

    /// The same kind of error, saying what happened.
    package func with(_ detail: String, underlying: (any Error)? = nil) -> Self {
        Self(kind: kind, detail: detail, underlying: underlying)
    }

    /// The same error with `context` (a file name, say) before its detail.
    package func prefixed(_ context: String) -> Self {
        Self(kind: kind, detail: detail.map { "\(context): \($0)" } ?? context, underlying: underlying)
    }

    /// True when both are the same kind of error; the detail does not count.
    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.kind == rhs.kind
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(kind)
    }

    public var description: String {
        var text = "\(Domain.name) \(kind)"
        if let detail { text += ": \(detail)" }
        if let underlying { text += " (\(underlying))" }
        return text
    }
}

/// The transport's errors.
public enum HTTP2ErrorDomain: PushErrorDomain {
    public static let name = "HTTP/2"
}

/// Why a request got no HTTP answer, or why an endpoint URL is unusable.
public typealias HTTP2ClientError = PushClientError<HTTP2ErrorDomain>
