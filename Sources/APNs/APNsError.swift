import PushHTTP2

/// Why a push got no answer from APNs, or why the client could not be set up.
///
/// Errors compare by kind only, whatever their detail, so callers match them like cases:
/// `catch let error where error == .timeout`. ``description`` says what happened.
public struct APNsError: Error, Sendable, CustomStringConvertible, Hashable {
    private enum Kind: String, Hashable, Sendable {
        case invalidEndpoint, invalidKey, connectionFailed, timeout, connectionClosed, protocolError
    }

    private let kind: Kind
    private let detail: String?
    // Kept for the description; an `any Error` cannot take part in equality anyway.
    private let underlying: (any Error)?

    private init(_ kind: Kind, _ detail: String? = nil, underlying: (any Error)? = nil) {
        self.kind = kind
        self.detail = detail
        self.underlying = underlying
    }

    /// The endpoint URL is not `https://host[:port]` or `http://host:port`.
    public static let invalidEndpoint = APNsError(.invalidEndpoint)
    /// The signing key is not a P-256 private key in PEM form, or cannot be read.
    public static let invalidKey = APNsError(.invalidKey)
    /// No connection to APNs could be opened (refused, unreachable, TLS handshake failed).
    public static let connectionFailed = APNsError(.connectionFailed)
    /// No answer came before the request's deadline.
    public static let timeout = APNsError(.timeout)
    /// The connection closed before APNs answered (or the client was shut down).
    public static let connectionClosed = APNsError(.connectionClosed)
    /// APNs sent something this client cannot use as an answer (a reset stream, a bad header).
    public static let protocolError = APNsError(.protocolError)

    /// The transport's error as the same kind of APNs error, with its detail.
    init(_ error: HTTP2ClientError) {
        let kind: Kind =
            switch error.kind {
            case .invalidEndpoint: .invalidEndpoint
            case .connectionFailed: .connectionFailed
            case .timeout: .timeout
            case .connectionClosed: .connectionClosed
            case .protocolError: .protocolError
            }
        self.init(kind, error.detail, underlying: error.underlying)
    }

    /// The same kind of error, saying what happened.
    func with(_ detail: String, underlying: (any Error)? = nil) -> APNsError {
        APNsError(kind, detail, underlying: underlying)
    }

    /// True when both are the same kind of error; the detail does not count.
    public static func == (lhs: APNsError, rhs: APNsError) -> Bool {
        lhs.kind == rhs.kind
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(kind)
    }

    public var description: String {
        var text = "APNs \(kind.rawValue)"
        if let detail { text += ": \(detail)" }
        if let underlying { text += " (\(underlying))" }
        return text
    }
}
