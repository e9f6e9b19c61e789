import Logging
import NIOCore
import NIOWebSocket
import RoomcastCore
import SocketIO
import Synchronization

/// Engine.IO v4 over one WebSocket connection: the open packet, pings and the connect timeout,
/// on the connection's event loop; Socket.IO packets go on to the connection's task.
final class EngineIOEndpoint: WebSocketEndpoint {
    private let services: SocketServices
    private let upgradeToken: String?
    private var connection: SocketConnection?
    /// The next keep-alive step: a ping, or the check that it was answered.
    private var keepAlive: Scheduled<Void>?
    private var connectTimeout: Scheduled<Void>?
    /// A ping is out and no pong has come yet.
    private var awaitingPong = false

    init(services: SocketServices, upgradeToken: String?) {
        self.services = services
        self.upgradeToken = upgradeToken
    }

    func opened(_ handler: WebSocketConnectionHandler) {
        let session = SocketSession(id: SocketConnection.randomID(), connection: handler)
        let connection = SocketConnection(session: session, services: services, upgradeToken: upgradeToken)
        self.connection = connection
        let settings = services.settings
        session.send(SocketConnection.openPacket(session.id, settings))
        let loop = handler.eventLoop.assumeIsolated()
        connectTimeout = loop.scheduleTask(in: .init(settings.connectTimeout)) {
            if !session.hasConnected.load(ordering: .relaxed) {
                session.close(.policyViolation, reason: "no Socket.IO CONNECT within the connect timeout")
            }
        }
        schedulePing(on: loop)
    }

    func received(_ message: WebSocketDataMessage) {
        guard let connection else { return }
        let text: ByteBuffer
        switch message {
        case .text(let buffer):
            text = buffer
        case .binary:
            connection.enqueue(.refused(RoomcastError(.malformedPacket, "binary frames are not supported: send JSON text")))
            return
        }
        let packet: EngineIOPacket
        do {
            packet = try EngineIOPacket(decoding: text)
        } catch {
            connection.enqueue(.refused(RoomcastError(.malformedPacket, error.message)))
            return
        }
        switch packet {
        case .message(let body):
            connection.enqueue(.packet(body))
        case .ping(let data):
            connection.session.send(EngineIOPacket.pong(data).encoded())
        case .pong:
            awaitingPong = false
        case .close:
            connection.session.close(.normalClosure, reason: "")
            connection.enqueue(.disconnect)
        case .open, .upgrade, .noop:
            break
        }
    }

    func shouldQuiesce() {
        // Clients reconnect to another node instead of holding this one up.
        connection?.session.close(.goingAway, reason: "server shutting down")
    }

    func closed() {
        keepAlive?.cancel()
        connectTimeout?.cancel()
        guard let connection else { return }
        connection.session.connectionClosed()
        connection.enqueue(.disconnect)
    }

    /// A ping every `pingInterval`, which must be answered within `pingTimeout`; the next one is
    /// counted from the check (as before: a client sees the same rhythm).
    private func schedulePing(on loop: NIOIsolatedEventLoop) {
        let settings = services.settings
        keepAlive = loop.scheduleTask(in: .init(settings.pingInterval)) { [self] in
            guard let session = connection?.session else { return }
            awaitingPong = true
            session.send(EngineIOPacket.ping(nil).encoded())
            keepAlive = loop.scheduleTask(in: .init(settings.pingTimeout)) { [self] in
                if awaitingPong {
                    session.close(.goingAway, reason: "ping timeout")
                } else {
                    schedulePing(on: loop)
                }
            }
        }
    }
}
