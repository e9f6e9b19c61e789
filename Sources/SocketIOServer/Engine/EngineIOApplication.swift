public import HTTPTypes

/// What an application puts on top of an ``EngineIOServer``: Socket.IO, or the suites' echo.
public protocol EngineIOApplication: Sendable {
    /// A new session id, unique among the sessions of every node that may see its requests.
    func makeSessionID() -> String
    /// The handler of a new session, made as the session opens, on its event loop, before its
    /// open packet is sent.
    /// - Parameter opening: the request that opened it (a handshake poll or a WebSocket
    ///   upgrade): read what the session needs from it now, as it is not kept.
    func handler(for session: EngineIOConnection, opening: EngineIOOpening) -> any EngineIOSessionHandler
}

/// The request that opens a session.
public struct EngineIOOpening: Sendable {
    /// Its path and query.
    public let request: EngineIORequest
    /// Its headers.
    public let headers: HTTPFields

    /// The opening request of these parts.
    public init(request: EngineIORequest, headers: HTTPFields) {
        self.request = request
        self.headers = headers
    }
}
