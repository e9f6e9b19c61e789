public import NIOWebSocket

/// Why the server closes a WebSocket connection: the code and reason its close frame carries.
public struct WebSocketCloseReason: Error, Sendable, Equatable {
    /// The close code (RFC 6455 §7.4).
    public var code: WebSocketErrorCode
    /// A short UTF-8 explanation, at most 123 bytes once encoded.
    public var reason: String

    public init(_ code: WebSocketErrorCode, _ reason: String = "") {
        self.code = code
        self.reason = reason
    }

    static func protocolError(_ reason: String) -> Self { .init(.protocolError, reason) }
    static let invalidUTF8 = Self(.dataInconsistentWithMessage, "text is not valid UTF-8")
}
