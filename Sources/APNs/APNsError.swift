public import PushHTTP2

/// APNs's errors.
public enum APNsErrorDomain: PushErrorDomain {
    public static let name = "APNs"
}

/// Why a push got no answer from APNs, or why the client could not be set up: the transport's
/// kinds (`connectionFailed`, `timeout`, `connectionClosed`, `protocolError`, `invalidEndpoint`)
/// and ``invalidKey``.
public typealias APNsError = PushClientError<APNsErrorDomain>

extension PushClientError where Domain == APNsErrorDomain {
    /// The signing key is not a P-256 private key in PEM form, or cannot be read.
    public static var invalidKey: Self { Self(kind: "invalidKey") }
}
