/// An error a client sees: a stable machine-readable `code` and a message for people.
///
/// The catalogue of codes is the contract with clients (acks, `error` events, REST bodies);
/// the server maps each code to an HTTP status.
public struct RoomcastError: Error, Hashable, Sendable, CustomStringConvertible {
    /// A stable error code, sent as text (`invalid_payload`, `forbidden` ...).
    public struct Code: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }

        /// The request or event payload has the wrong shape, type or value.
        public static let invalidPayload = Code(rawValue: "invalid_payload")
        /// A Socket.IO or Engine.IO packet could not be parsed.
        public static let malformedPacket = Code(rawValue: "malformed_packet")
        /// A binary event (Socket.IO attachments) for an event that takes one JSON object: every
        /// event of the contract does.
        public static let binaryNotSupported = Code(rawValue: "binary_not_supported")
        /// The client sent an event the server does not know.
        public static let unknownEvent = Code(rawValue: "unknown_event")
        /// No valid credentials (missing, malformed or tampered token, wrong password).
        public static let unauthorized = Code(rawValue: "unauthorized")
        /// The token was valid once but has expired.
        public static let tokenExpired = Code(rawValue: "token_expired")
        /// Authenticated, but not allowed (not a participant of the room).
        public static let forbidden = Code(rawValue: "forbidden")
        /// The room, user or element does not exist.
        public static let notFound = Code(rawValue: "not_found")
        /// The path exists, but not for this HTTP method (REST only; the response says which in `Allow`).
        public static let methodNotAllowed = Code(rawValue: "method_not_allowed")
        /// The request conflicts with existing state (username taken).
        public static let conflict = Code(rawValue: "conflict")
        /// A body or frame exceeded its size limit.
        public static let payloadTooLarge = Code(rawValue: "payload_too_large")
        /// A size or count limit was reached (elements per room ...).
        public static let limitExceeded = Code(rawValue: "limit_exceeded")
        /// Too many requests or events.
        public static let rateLimited = Code(rawValue: "rate_limited")
        /// Redis cannot be reached; retry later.
        public static let unavailable = Code(rawValue: "unavailable")
        /// Something failed that the client cannot fix.
        public static let internalError = Code(rawValue: "internal")

        public var description: String { rawValue }
    }

    /// The stable code.
    public var code: Code
    /// A human-readable explanation.
    public var message: String
    /// For `rate_limited`: when the client may try again (REST answers it as `Retry-After`).
    public var retryAfter: Duration?

    /// Creates an error.
    public init(_ code: Code, _ message: String, retryAfter: Duration? = nil) {
        self.code = code
        self.message = message
        self.retryAfter = retryAfter
    }

    public var description: String { "\(code): \(message)" }
}
