import NIOCore
import NIOWebSocket
public import SocketIO
import WebSocketServer

/// A WebSocket connection that starts an Engine.IO session of its own.
final class EngineIOEndpoint: WebSocketEndpoint {
    private let server: EngineIOServer
    /// Handed to the application when the connection opens, and not kept after.
    private var opening: EngineIOOpening?
    private var engine: EngineIOSession?

    init(server: EngineIOServer, opening: EngineIOOpening) {
        self.server = server
        self.opening = opening
    }

    func opened(_ connection: WebSocketConnectionHandler) {
        guard let opening else { return }
        self.opening = nil
        let session = EngineIOConnection(id: server.application.makeSessionID(), connection: connection, gauges: server.gauges)
        let handler = server.application.handler(for: session, opening: opening)
        engine = EngineIOSession(
            session: session, handler: handler, settings: server.settings, wheel: server.wheels.wheel(on: connection.eventLoop),
            loop: connection.eventLoop, upgrades: []
        )
    }

    func received(_ message: WebSocketDataMessage) {
        engine?.received(EngineIOInput(message))
    }

    func shouldQuiesce() {
        // Clients reconnect to another node instead of holding this one up.
        engine?.drain()
    }

    func closed() {
        engine?.end()
    }
}

/// What one WebSocket message brings an Engine.IO session.
public enum EngineIOInput: Sendable {
    /// A text message's packet, or a binary message (binary data as it is).
    case packet(EngineIOPacket)
    /// Text that is no Engine.IO packet.
    case undecodable(String)

    init(_ message: WebSocketDataMessage) {
        switch message {
        case .binary(let data):
            self = .packet(.binary(data))
        case .text(let text):
            do {
                self = .packet(try EngineIOPacket(decoding: text))
            } catch {
                self = .undecodable(error.message)
            }
        }
    }
}

/// A WebSocket connection that upgrades a long-polling session (Engine.IO's probe): `2probe` is
/// answered with `3probe`, and the upgrade packet moves the session onto this connection.
final class EngineIOUpgradeEndpoint: WebSocketEndpoint {
    private let session: EngineIOConnection
    /// The polling session's Engine.IO state, on its own loop (which may not be this one's).
    private let engine: NIOLoopBound<EngineIOSession>
    private var handler: WebSocketConnectionHandler?
    private var isUpgraded = false

    init(session: EngineIOConnection, engine: NIOLoopBound<EngineIOSession>) {
        self.session = session
        self.engine = engine
    }

    func opened(_ handler: WebSocketConnectionHandler) {
        self.handler = handler
    }

    func received(_ message: WebSocketDataMessage) {
        let input = EngineIOInput(message)
        if !isUpgraded, let handler {
            switch input {
            case .packet(.ping(let data)):
                // The probe: answered here, while the session still polls.
                handler.write(WebSocketFrameBytes.frame(.text, EngineIOPacket.pong(data).encoded()))
                handler.flush()
                if data.map({ String(buffer: $0) }) == "probe" { session.beginUpgrade() }
                return
            case .packet(.upgrade):
                isUpgraded = true
                session.upgrade(to: handler)
                onEngine { $0.upgraded() }
                return
            default:
                break
            }
        }
        onEngine { engine in engine.received(input) }
    }

    func shouldQuiesce() {
        onEngine { $0.drain() }
        // A probe that has not upgraded: the drain ends the polling session, not this connection.
        if !isUpgraded { handler?.close(WebSocketCloseReason(.goingAway, "server shutting down")) }
    }

    func closed() {
        // A probe that never upgraded leaves the session polling.
        if isUpgraded { onEngine { $0.end() } } else { session.abandonUpgrade() }
    }

    /// Runs `body` with the Engine.IO session on its loop, in order.
    private func onEngine(_ body: @escaping @Sendable (EngineIOSession) -> Void) {
        let engine = self.engine
        engine.eventLoop.execute { body(engine.value) }
    }
}

/// A WebSocket for a session that another WebSocket has upgraded or is probing: accepted, then
/// closed at once, as the reference server does (engine.io `Server.onWebSocket`); the session
/// goes on where it is.
final class RefusedUpgradeEndpoint: WebSocketEndpoint {
    func opened(_ connection: WebSocketConnectionHandler) {
        connection.close(WebSocketCloseReason(.policyViolation, "session already upgraded"))
    }

    func received(_ message: WebSocketDataMessage) {}

    func shouldQuiesce() {}

    func closed() {}
}
