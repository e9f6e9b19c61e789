/// Why a socket left its namespace, in the words Socket.IO servers use.
public struct SocketIODisconnectReason: Sendable, Hashable, CustomStringConvertible {
    private enum Kind: Hashable {
        case clientNamespaceDisconnect, serverNamespaceDisconnect, transportClose, pingTimeout, parseError, serverShuttingDown
        case deadline, forcedClose
    }
    private let kind: Kind

    private init(kind: Kind) {
        self.kind = kind
    }

    /// The client left the namespace (its DISCONNECT packet).
    public static let clientNamespaceDisconnect = Self(kind: .clientNamespaceDisconnect)
    /// The server removed the socket (``SocketIOSocket/disconnect(closingConnection:)``).
    public static let serverNamespaceDisconnect = Self(kind: .serverNamespaceDisconnect)
    /// The connection closed: the client closed it, or the network failed.
    public static let transportClose = Self(kind: .transportClose)
    /// The client did not answer a ping in time.
    public static let pingTimeout = Self(kind: .pingTimeout)
    /// The client sent what cannot be decoded, or more than the server holds for it.
    public static let parseError = Self(kind: .parseError)
    /// The server is shutting down.
    public static let serverShuttingDown = Self(kind: .serverShuttingDown)
    /// The connection's deadline passed (``SocketIOSocket/setDeadline(_:)``).
    public static let deadline = Self(kind: .deadline)
    /// The server closed the connection.
    public static let forcedClose = Self(kind: .forcedClose)

    /// The reason of a socket whose connection ended.
    init(_ reason: EngineIOCloseReason) {
        switch reason {
        case .pingTimeout: self = .pingTimeout
        case .parseError: self = .parseError
        case .serverShutdown: self = .serverShuttingDown
        case .deadline: self = .deadline
        case .serverClosed, .connectTimeout: self = .forcedClose
        default: self = .transportClose
        }
    }

    /// As Socket.IO servers name it (`"client namespace disconnect"`, `"ping timeout"`, …).
    public var description: String {
        switch kind {
        case .clientNamespaceDisconnect: return "client namespace disconnect"
        case .serverNamespaceDisconnect: return "server namespace disconnect"
        case .transportClose: return "transport close"
        case .pingTimeout: return "ping timeout"
        case .parseError: return "parse error"
        case .serverShuttingDown: return "server shutting down"
        case .deadline: return "deadline reached"
        case .forcedClose: return "forced close"
        }
    }
}
