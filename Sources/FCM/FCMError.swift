public import PushHTTP2

/// FCM's errors.
public enum FCMErrorDomain: PushErrorDomain {
    public static let name = "FCM"
}

/// Why a push got no answer from FCM, or why the client could not be set up: the transport's
/// kinds (`connectionFailed`, `timeout`, `connectionClosed`, `protocolError`, `invalidEndpoint`),
/// ``invalidServiceAccount`` and ``authenticationFailed``. Descriptions never hold the private
/// key, an assertion or an access token.
public typealias FCMError = PushClientError<FCMErrorDomain>

extension PushClientError where Domain == FCMErrorDomain {
    /// The service-account key cannot be read, is not JSON, lacks a field or holds no RSA key.
    public static var invalidServiceAccount: Self { Self(kind: "invalidServiceAccount") }
    /// Google's token endpoint answered, but with no access token (a revoked key, a bad clock).
    public static var authenticationFailed: Self { Self(kind: "authenticationFailed") }
}
