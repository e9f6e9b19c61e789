import PushHTTP2

/// Why a push got no answer from FCM, or why the client could not be set up.
///
/// Errors compare by kind only, whatever their detail, so callers match them like cases:
/// `catch let error where error == .timeout`. ``description`` says what happened and never holds
/// the private key, an assertion or an access token.
public struct FCMError: Error, Sendable, CustomStringConvertible, Hashable {
    private enum Kind: String, Hashable, Sendable {
        case invalidEndpoint, invalidServiceAccount, authenticationFailed, connectionFailed, timeout, connectionClosed, protocolError
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

    /// An endpoint or token URI is not an `https://` or `http://host:port` URL.
    public static let invalidEndpoint = FCMError(.invalidEndpoint)
    /// The service-account key cannot be read, is not JSON, lacks a field or holds no RSA key.
    public static let invalidServiceAccount = FCMError(.invalidServiceAccount)
    /// Google's token endpoint answered, but with no access token (a revoked key, a bad clock).
    public static let authenticationFailed = FCMError(.authenticationFailed)
    /// No connection could be opened (refused, unreachable, TLS handshake failed).
    public static let connectionFailed = FCMError(.connectionFailed)
    /// No answer came before the request's deadline.
    public static let timeout = FCMError(.timeout)
    /// The connection closed before the answer came (or the client was shut down).
    public static let connectionClosed = FCMError(.connectionClosed)
    /// The server sent something this client cannot use as an answer.
    public static let protocolError = FCMError(.protocolError)

    /// The transport's error as the same kind of FCM error, with its detail.
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
    func with(_ detail: String, underlying: (any Error)? = nil) -> FCMError {
        FCMError(kind, detail, underlying: underlying)
    }

    /// The same error with `context` (a file name, say) before its detail.
    func prefixed(_ context: String) -> FCMError {
        FCMError(kind, detail.map { "\(context): \($0)" } ?? context, underlying: underlying)
    }

    /// True when both are the same kind of error; the detail does not count.
    public static func == (lhs: FCMError, rhs: FCMError) -> Bool {
        lhs.kind == rhs.kind
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(kind)
    }

    public var description: String {
        var text = "FCM \(kind.rawValue)"
        if let detail { text += ": \(detail)" }
        if let underlying { text += " (\(underlying))" }
        return text
    }
}
