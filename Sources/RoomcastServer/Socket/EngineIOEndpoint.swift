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
    /// The one timer of the connection (a timer each is memory per connection): the connect
    /// timeout, the next ping, or the check that the last ping was answered.
    private var timer: Scheduled<Void>?
    /// Until CONNECT succeeds, when the socket is closed for not sending it.
    private var connectDeadline: NIODeadline?
    private var nextPing = NIODeadline.distantFuture
    /// While a ping is out: when it must have been answered.
    private var pongDeadline: NIODeadline?
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
        let now = NIODeadline.now()
        connectDeadline = now + .init(settings.connectTimeout)
        nextPing = now + .init(settings.pingInterval)
        arm(handler.eventLoop.assumeIsolated())
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
        timer?.cancel()
        guard let connection else { return }
        connection.session.connectionClosed()
        connection.enqueue(.disconnect)
    }

    // MARK: Keep-alive

    private func arm(_ loop: NIOIsolatedEventLoop) {
        let next = min(connectDeadline ?? .distantFuture, pongDeadline ?? nextPing)
        timer = loop.scheduleTask(deadline: next) { [self] in tick(loop) }
    }

    /// A ping every `pingInterval`, which must be answered within `pingTimeout`; the next one is
    /// counted from that check. A socket that has not connected by `connectTimeout` is closed.
    private func tick(_ loop: NIOIsolatedEventLoop) {
        guard let session = connection?.session else { return }
        let settings = services.settings
        let now = NIODeadline.now()
        if let deadline = connectDeadline, now >= deadline {
            connectDeadline = nil
            if !session.hasConnected.load(ordering: .relaxed) {
                return session.close(.policyViolation, reason: "no Socket.IO CONNECT within the connect timeout")
            }
        }
        if let deadline = pongDeadline {
            if now >= deadline {
                if awaitingPong { return session.close(.goingAway, reason: "ping timeout") }
                pongDeadline = nil
                nextPing = now + .init(settings.pingInterval)
            }
        } else if now >= nextPing {
            awaitingPong = true
            pongDeadline = now + .init(settings.pingTimeout)
            session.send(EngineIOPacket.ping(nil).encoded())
        }
        arm(loop)
    }
}
