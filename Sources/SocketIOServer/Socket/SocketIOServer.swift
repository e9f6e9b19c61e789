extension EngineIOServer {
    /// A Socket.IO v5 server: Engine.IO at `path`, each session a Socket.IO connection of
    /// `application`.
    /// - Parameter gauges: where connections with a connected namespace are counted, by transport.
    public convenience init(
        path: String = "/socket.io", settings: EngineIOSettings, socketIO: SocketIOSettings, application: any SocketIOApplication,
        gauges: ConnectedGauges? = nil
    ) {
        self.init(path: path, settings: settings, application: SocketIOOverEngineIO(settings: socketIO, application: application), gauges: gauges)
    }
}

/// Socket.IO as an Engine.IO application: a ``SocketIOConnection`` per session. A class: every
/// connection refers to the one instance.
final class SocketIOOverEngineIO: EngineIOApplication {
    let settings: SocketIOSettings
    let application: any SocketIOApplication

    init(settings: SocketIOSettings, application: any SocketIOApplication) {
        self.settings = settings
        self.application = application
    }

    func makeSessionID() -> String {
        application.makeSessionID()
    }

    func handler(for session: SocketSession, opening: EngineIOOpening) -> any EngineIOSessionHandler {
        SocketIOConnection(session: session, opening: opening, server: self)
    }
}
