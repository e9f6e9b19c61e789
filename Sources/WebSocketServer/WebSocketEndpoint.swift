public import NIOCore

/// What an upgraded connection does with its messages: the Engine.IO session in the gateway, an
/// echo in the conformance server. Every call comes on the connection's event loop.
public protocol WebSocketEndpoint: AnyObject {
    /// The connection is open; `connection` writes to it (on its event loop only).
    func opened(_ connection: WebSocketConnectionHandler)
    /// A complete message arrived.
    func received(_ message: WebSocketDataMessage)
    /// The server is draining: close soon, so the client reconnects to another node.
    func shouldQuiesce()
    /// The connection is gone; nothing more can be written.
    func closed()
}
