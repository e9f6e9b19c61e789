/// Why an Engine.IO session ended.
public struct EngineIOCloseReason: Sendable, Hashable, CustomStringConvertible {
    private enum Kind: Hashable {
        case clientClosed, transportClosed, pingTimeout, connectTimeout, deadline, serverShutdown, serverClosed, parseError
    }
    private let kind: Kind

    /// The client sent Engine.IO's close packet.
    public static let clientClosed = Self(kind: .clientClosed)
    /// The connection went away (the client left, or the network failed).
    public static let transportClosed = Self(kind: .transportClosed)
    /// The client did not answer a ping in time.
    public static let pingTimeout = Self(kind: .pingTimeout)
    /// The application did not accept the client within ``EngineIOSettings/connectTimeout``.
    public static let connectTimeout = Self(kind: .connectTimeout)
    /// The session's deadline passed (``SocketIOSocket/setDeadline(_:)``).
    public static let deadline = Self(kind: .deadline)
    /// The server is shutting down: the client should reconnect elsewhere.
    public static let serverShutdown = Self(kind: .serverShutdown)
    /// The application closed it.
    public static let serverClosed = Self(kind: .serverClosed)
    /// The client sent what cannot be decoded, or broke the protocol's rules.
    public static let parseError = Self(kind: .parseError)

    /// The reason in words, for logs.
    public var description: String {
        switch kind {
        case .clientClosed: return "client closed"
        case .transportClosed: return "transport closed"
        case .pingTimeout: return "ping timeout"
        case .connectTimeout: return "connect timeout"
        case .deadline: return "deadline reached"
        case .serverShutdown: return "server shutting down"
        case .serverClosed: return "server closed"
        case .parseError: return "parse error"
        }
    }
}
