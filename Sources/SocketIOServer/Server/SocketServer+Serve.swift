import Hummingbird
public import Logging
import NIOCore
import WebSocketServer

extension SocketServer {
    /// Serves the server on `host:port` (long-polling and WebSocket, no other route) until a
    /// graceful shutdown (SIGTERM or SIGINT, with `ServiceLifecycle`'s signal handling in the
    /// caller's service group, or the task's cancellation).
    /// - Parameters:
    ///   - port: 0 takes any free port; `onReady` says which.
    ///   - onReady: called with the port once the server accepts connections.
    public func serve(host: String = "127.0.0.1", port: Int, logger: Logger = Logger(label: "SocketIOServer"), onReady: @escaping @Sendable (Int) -> Void = { _ in }) async throws {
        let router = Router()
        engine.registerPolling(on: router)
        let settings = configuration.engineIO
        let limits = WebSocketLimits(maxMessageSize: settings.maxPayload, maxQueuedBytes: settings.pollingQueueBytes)
        let engine = self.engine
        var application = Application(
            router: router,
            server: WebSocketServerChannel.builder(limits: limits) { head in engine.webSocketRoute(head) },
            configuration: .init(address: .hostname(host, port: port)),
            onServerRunning: { channel in onReady(channel.localAddress?.port ?? port) },
            logger: logger
        )
        application.addServices(self)
        try await application.runService()
    }
}
