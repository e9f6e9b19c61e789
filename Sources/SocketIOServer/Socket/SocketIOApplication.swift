public import NIOCore

/// What an application puts on top of a ``SocketIOServer``: its namespaces and a handler per
/// connection.
public protocol SocketIOApplication: Sendable {
    /// A new Engine.IO session id, unique among the sessions of every node that may see its requests.
    func makeSessionID() -> String
    /// Whether `namespace` exists; a CONNECT to any other is refused as the reference server
    /// refuses it (`44/<nsp>,{"message":"Invalid namespace"}`).
    func serves(namespace: String) -> Bool
    /// The handler of a new connection, made as it opens (on its event loop).
    /// - Parameters:
    ///   - session: where the handler sends its packets (``SocketSession/send(_:)``,
    ///     ``SocketSession/send(_:attachments:)``).
    ///   - opening: the request that opened it: read what the handler needs now.
    func handler(for session: SocketSession, opening: EngineIOOpening) -> any SocketIOHandler
}

/// One connection's application side. Its methods are called one at a time, in the order the
/// packets came, by the connection's one task: state kept here needs no lock of its own.
public protocol SocketIOHandler: AnyObject, Sendable {
    /// A CONNECT to a namespace the application serves, with its auth payload (a JSON object, or
    /// nil). Answers the client itself (`SocketIOFrame.connect` or `.connectError`).
    /// - Returns: whether the namespace is now connected (events for it are handled).
    func connect(namespace: String, auth: ByteBuffer?) async -> Bool
    /// An event on a connected namespace, its binary attachments in place.
    func event(_ event: SocketIOEvent) async
    /// An ACK from the client, for an event the server sent with an ack id.
    func ack(_ ack: SocketIOAck) async
    /// The client left a connected namespace (DISCONNECT).
    func disconnect(namespace: String) async
    /// The connection ended, from either side: nothing more comes.
    func closed() async
    /// The client sent what cannot be decoded; the connection closes right after (for logs and
    /// metrics).
    func undecodable(_ reason: String) async
    /// A CONNECT to a namespace the application does not serve was refused (for logs and metrics).
    func refused(namespace: String) async
    /// The credential expires at `seconds` since 1970 (``SocketSession/tokenExpiry``), soon.
    func credentialExpiring(at seconds: Int64)
    /// The credential expired: whatever the client should be told goes out now; the session closes after.
    func credentialExpired()
}

extension SocketIOHandler {
    public func ack(_ ack: SocketIOAck) async {}
    public func undecodable(_ reason: String) async {}
    public func refused(namespace: String) async {}
    public func credentialExpiring(at seconds: Int64) {}
    public func credentialExpired() {}
}

/// An EVENT or BINARY_EVENT from the client.
public struct SocketIOEvent: Sendable {
    public let namespace: String
    public let name: String
    /// Each argument's raw JSON; in a binary event, `{"_placeholder":true,"num":n}` stands for
    /// `attachments[n]`.
    public let arguments: [ByteBuffer]
    /// The binary frames of a BINARY_EVENT, in order; nil for a plain EVENT.
    public let attachments: [ByteBuffer]?
    /// The client wants an ACK with this id.
    public let ackId: Int?
}

/// An ACK or BINARY_ACK from the client.
public struct SocketIOAck: Sendable {
    public let namespace: String
    public let id: Int
    public let arguments: [ByteBuffer]
    public let attachments: [ByteBuffer]?
}
