public import NIOCore

/// A client's CONNECT to a namespace, as its connect handler sees it.
public struct SocketIOConnectRequest: Sendable {
    /// The CONNECT's auth payload (a JSON object), or nil when it carried none.
    public let auth: ByteBuffer?
    let connection: SocketIOConnection

    /// The auth payload decoded as `type`; nil when there is none or it is not one.
    public func auth<Auth: Decodable>(as type: Auth.Type) -> Auth? {
        guard let auth else { return nil }
        return try? SocketIOArguments(json: [auth]).decode(type)
    }

    /// What the connection kept of the request that opened it
    /// (``SocketServer/Configuration/handshake``), shared by every CONNECT on it; a handler may
    /// replace it (a credential kept as the identity it was verified as, say).
    public var handshake: (any Sendable)? {
        get { connection.handshake }
        nonmutating set { connection.handshake = newValue }
    }
}

/// What a connect handler decides.
public struct SocketIOConnectDecision<Context: Sendable>: Sendable {
    enum Kind {
        case accept(Context)
        case refuse(message: String, data: ByteBuffer?)
    }
    let kind: Kind

    /// Accepts the socket with its context: what its event handlers get with each event.
    public static func accept(_ context: Context) -> Self {
        Self(kind: .accept(context))
    }

    /// Refuses the socket: the client gets CONNECT_ERROR `{"message":…,"data":…}`.
    /// - Parameter data: a JSON value the client gets as the error's `data`; nil for none.
    public static func refuse(_ message: String, data: ByteBuffer? = nil) -> Self {
        Self(kind: .refuse(message: message, data: data))
    }
}

extension SocketIOConnectDecision where Context == Void {
    /// Accepts the socket.
    public static var accept: Self { Self(kind: .accept(())) }
}
