/// An event from a client, as it came: its name, its arguments and the ack id it asked for.
public struct SocketIOEvent: Sendable {
    /// The event's name.
    public let name: String
    /// Its arguments after the name, attachments in place of placeholders.
    public let arguments: SocketIOArguments
    /// The id to answer with ``SocketIOSocket/ack(_:with:)``; nil when the client wants no ack.
    public let ackID: Int?
}

/// How events of one socket are ordered against each other.
///
/// Whatever the order, a socket's CONNECT and DISCONNECT are barriers: its events before them
/// are handled first, and those after them wait.
public enum SocketIOEventOrder: Sendable {
    /// One at a time, in the order they came (as Node's server runs them).
    case arrival
    /// Each as it comes, its own task (as python-socketio's `async_handlers`).
    case concurrent
    /// Events with the same key (``SocketIOEventRoute/run(orderedBy:_:)``) one at a time in the
    /// order they came; events of different keys independently. Events without a key are ordered
    /// among themselves.
    case perKey
}

/// What becomes of an event once its handler's synchronous part has run (on the connection's
/// event loop, as the packet arrives).
public struct SocketIOEventRoute: Sendable {
    let key: String?
    let work: (@Sendable () async -> Void)?

    /// Nothing more to do: the event was handled (or answered) already.
    public static let handled = Self(key: nil, work: nil)

    /// Runs `work` as the namespace's ``SocketIOEventOrder`` has it.
    /// - Parameter key: with ``SocketIOEventOrder/perKey``, what orders it against the socket's
    ///   other events (a room's name, say); ignored otherwise.
    public static func run(orderedBy key: String? = nil, _ work: @escaping @Sendable () async -> Void) -> Self {
        Self(key: key, work: work)
    }
}
