/// The one error type of the Redis client.
///
/// `code` says what kind of failure it was and is stable to match on; `message` is for people
/// (for ``Code/reply`` it is Redis's own message).
public struct RedisError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure; new codes may be added without breaking callers.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable {
            case reply, timeout, connectionClosed, connectionFailed, unexpectedReply
            case protocolError, invalidURL, invalidConfiguration, clientShutdown, crossSlot
            case notReplicated
        }
        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// Redis answered with an error reply.
        public static let reply = Code(.reply)
        /// No reply arrived before the command's deadline; the connection was closed.
        public static let timeout = Code(.timeout)
        /// The connection closed while the command was in flight or queued.
        public static let connectionClosed = Code(.connectionClosed)
        /// A connection could not be established (or its handshake was refused).
        public static let connectionFailed = Code(.connectionFailed)
        /// A reply had a shape the caller did not expect.
        public static let unexpectedReply = Code(.unexpectedReply)
        /// The server sent bytes hiredis could not parse; the connection was closed.
        public static let protocolError = Code(.protocolError)
        /// A `redis://` URL could not be understood.
        public static let invalidURL = Code(.invalidURL)
        /// Settings other than the URL could not be used (a TLS file missing or unreadable).
        public static let invalidConfiguration = Code(.invalidConfiguration)
        /// The client was shut down.
        public static let clientShutdown = Code(.clientShutdown)
        /// In cluster mode, a command's (or function call's) keys hash to more than one slot; it was not sent.
        public static let crossSlot = Code(.crossSlot)
        /// A write asked to reach replicas (``RedisWriteDurability/replicas(_:timeout:)``) was
        /// applied by the master, but fewer replicas than asked confirmed it in time: it may be
        /// lost if the master fails now.
        public static let notReplicated = Code(.notReplicated)

        public var description: String { base.rawValue }
    }

    /// What kind of failure.
    public var code: Code
    /// A human-readable explanation; Redis's message for ``Code/reply``.
    public var message: String
    /// The lower-level error that caused this one, if any.
    public var underlying: (any Error)?

    /// Creates an error.
    public init(_ code: Code, _ message: String, underlying: (any Error)? = nil) {
        self.code = code
        self.message = message
        self.underlying = underlying
    }

    /// The first word of a Redis error reply (`ERR`, `WRONGTYPE`, `NOSCRIPT`, `MOVED` ...).
    public var replyPrefix: Substring? {
        guard code == .reply else { return nil }
        return message.split(separator: " ", maxSplits: 1).first
    }

    public var description: String {
        if let underlying { return "Redis \(code): \(message) (\(underlying))" }
        return "Redis \(code): \(message)"
    }
}
