public import HTTPTypes
public import Hummingbird
public import NIOCore
public import ServiceLifecycle
public import WebSocketServer

/// An Engine.IO v4 server at one path, over long-polling and WebSocket, for one application.
///
/// Its polling routes go on a Hummingbird router (``registerPolling(on:)``), its WebSocket
/// upgrades through ``webSocketRoute(_:)`` in `WebSocketServerChannel`'s route. As a service it
/// drains on shutdown: every session it holds is ended as a lost transport (never with a close
/// packet, after which some clients do not reconnect), so that its client reconnects elsewhere,
/// and handshakes are refused with 503.
public final class EngineIOServer: Service, Sendable {
    /// The path it serves, such as `/socket.io` (with or without a trailing slash).
    public let path: String
    /// What every session is told in its open packet, and held to.
    public let settings: EngineIOSettings
    let application: any EngineIOApplication
    let gauges: ConnectedGauges?
    let sessions = PollingSessions()
    /// The sessions' timers, one per event loop.
    let wheels: LoopTimerWheels<EngineIOSession>

    /// An Engine.IO server for `application`.
    /// - Parameters:
    ///   - path: the path it serves, such as `/engine.io`.
    ///   - settings: what every session is told in its open packet, and held to.
    public convenience init(path: String, settings: EngineIOSettings, application: any EngineIOApplication) {
        self.init(path: path, settings: settings, application: application, gauges: nil)
    }

    /// - Parameter gauges: where sessions the application accepted are counted, by transport.
    init(path: String, settings: EngineIOSettings, application: any EngineIOApplication, gauges: ConnectedGauges?) {
        self.path = path
        self.settings = settings
        self.application = application
        self.gauges = gauges
        self.wheels = LoopTimerWheels(granularity: settings.timerGranularity)
    }

    /// Whether a request's target is this server's path.
    public func serves(_ request: EngineIORequest) -> Bool {
        request.isPath(path)
    }

    /// The endpoint for a WebSocket upgrade request, or nil for one that is not this server's
    /// to take (the router then answers it, and explains the refusal).
    public func webSocketRoute(_ head: HTTPRequest) -> (@Sendable (any Channel) -> any WebSocketEndpoint)? {
        let request = EngineIORequest(target: head.path ?? "/")
        guard serves(request), request.websocketRefusal == nil else { return nil }
        if let sid = request.sid {
            // The upgrade of a long-polling session this server holds.
            guard let entry = sessions.entry(sid) else { return nil }
            guard entry.session.mayUpgrade else { return { _ in RefusedUpgradeEndpoint() } }
            return { _ in EngineIOUpgradeEndpoint(session: entry.session, engine: entry.engine) }
        }
        let opening = EngineIOOpening(request: request, headers: head.headerFields)
        return { _ in EngineIOEndpoint(server: self, opening: opening) }
    }

    /// Adds the long-polling routes (GET, POST; other methods refused as the reference does).
    public func registerPolling<Context: RequestContext>(on router: Router<Context>) {
        EngineIORoutes(server: self).register(on: router)
    }

    /// Waits for the graceful shutdown, then drains every session that started with polling
    /// (those that upgraded close their WebSocket with 1001); sessions that started on a
    /// WebSocket are drained by their connection's quiesce.
    public func run() async {
        try? await gracefulShutdown()
        sessions.drainAll()
    }
}
