import NIOCore
import NIOWebSocket
import RoomcastCore
import SocketIO

/// A WebSocket connection that starts an Engine.IO session of its own.
final class EngineIOEndpoint: WebSocketEndpoint {
    private let services: SocketServices
    private let upgradeToken: String?
    private var engine: EngineIOSession?

    init(services: SocketServices, upgradeToken: String?) {
        self.services = services
        self.upgradeToken = upgradeToken
    }

    func opened(_ handler: WebSocketConnectionHandler) {
        let session = SocketSession(id: EngineIOSessionID.make(on: services.nodeID), connection: handler)
        engine = EngineIOSession(session: session, services: services, upgradeToken: upgradeToken, loop: handler.eventLoop, upgrades: [])
    }

    func received(_ message: WebSocketDataMessage) {
        guard let engine else { return }
        switch EngineIOEndpoint.packet(of: message) {
        case .success(let packet): engine.received(packet)
        case .failure(let error): engine.refuse(error)
        }
    }

    func shouldQuiesce() {
        // Clients reconnect to another node instead of holding this one up.
        engine?.close(.goingAway, reason: "server shutting down")
    }

    func closed() {
        engine?.end()
    }

    /// The Engine.IO packet a WebSocket message holds, or why it holds none.
    static func packet(of message: WebSocketDataMessage) -> Result<EngineIOPacket, RoomcastError> {
        switch message {
        case .binary:
            return .failure(RoomcastError(.malformedPacket, "binary frames are not supported: send JSON text"))
        case .text(let text):
            do {
                return .success(try EngineIOPacket(decoding: text))
            } catch {
                return .failure(RoomcastError(.malformedPacket, error.message))
            }
        }
    }
}

/// A WebSocket connection that upgrades a long-polling session (Engine.IO's probe): `2probe` is
/// answered with `3probe`, and the upgrade packet moves the session onto this connection.
final class EngineIOUpgradeEndpoint: WebSocketEndpoint {
    private let session: SocketSession
    /// The polling session's Engine.IO state, on its own loop (which may not be this one's).
    private let engine: NIOLoopBound<EngineIOSession>
    private var handler: WebSocketConnectionHandler?
    private var isUpgraded = false

    init(session: SocketSession, engine: NIOLoopBound<EngineIOSession>) {
        self.session = session
        self.engine = engine
    }

    func opened(_ handler: WebSocketConnectionHandler) {
        self.handler = handler
    }

    func received(_ message: WebSocketDataMessage) {
        let result = EngineIOEndpoint.packet(of: message)
        if !isUpgraded, let handler {
            switch result {
            case .success(.ping(let data)):
                // The probe: answered here, while the session still polls.
                handler.write(WebSocketFrameBytes.frame(.text, EngineIOPacket.pong(data).encoded()))
                handler.flush()
                return
            case .success(.upgrade):
                isUpgraded = true
                session.upgrade(to: handler)
                onEngine { $0.upgraded() }
                return
            default:
                break
            }
        }
        onEngine { engine in
            switch result {
            case .success(let packet): engine.received(packet)
            case .failure(let error): engine.refuse(error)
            }
        }
    }

    func shouldQuiesce() {
        onEngine { $0.close(.goingAway, reason: "server shutting down") }
    }

    func closed() {
        // A probe that never upgraded leaves the session polling.
        if isUpgraded { onEngine { $0.end() } }
    }

    /// Runs `body` with the Engine.IO session on its loop, in order.
    private func onEngine(_ body: @escaping @Sendable (EngineIOSession) -> Void) {
        let engine = self.engine
        engine.eventLoop.execute { body(engine.value) }
    }
}
