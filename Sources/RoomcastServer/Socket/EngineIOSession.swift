import Foundation
import NIOCore
import NIOWebSocket
import RoomcastCore
import SocketIO
import Synchronization
import WebSocketServer

/// Engine.IO v4 for one session, whatever carries it (WebSocket, or long-polling until it
/// upgrades): the open packet, pings and the connect timeout, on the session's event loop;
/// Socket.IO packets go on to the session's `SocketConnection` task.
final class EngineIOSession {
    let connection: SocketConnection
    var session: SocketSession { connection.session }
    private let loop: any EventLoop
    /// Called once when the session ends (to forget a polling session).
    private let onEnd: () -> Void
    /// Served by long-polling (not upgraded): nothing else tells the node that it ended.
    private(set) var isPolling: Bool
    private var hasEnded = false
    /// The one timer of the session (a timer each is memory per connection): the connect
    /// timeout, the next ping, or the check that the last ping was answered.
    private var timer: Scheduled<Void>?
    private var heartbeat: EngineIOHeartbeat
    /// `auth:expiring` went out for the token's current expiry.
    private var hasWarnedOfExpiry = false
    private let expiryWarning: Int64

    /// Starts a session: sends the open packet and arms the timers. Call on `loop`.
    /// - Parameter upgrades: the transports the client may upgrade to (`["websocket"]` when polling).
    init(session: SocketSession, services: SocketServices, upgradeToken: String?, loop: any EventLoop, upgrades: [String], onEnd: @escaping () -> Void = {}) {
        self.connection = SocketConnection(session: session, services: services, upgradeToken: upgradeToken)
        let settings = services.settings
        self.loop = loop
        self.onEnd = onEnd
        self.isPolling = !upgrades.isEmpty
        self.expiryWarning = Int64(settings.expiryWarning.wholeMilliseconds / 1000)
        self.heartbeat = EngineIOHeartbeat(
            now: .now(), pingInterval: .init(settings.pingInterval), pingTimeout: .init(settings.pingTimeout),
            connectTimeout: .init(settings.connectTimeout)
        )
        session.send(SocketConnection.openPacket(session.id, settings, upgrades: upgrades))
        // Until `end()`, which breaks these cycles (session → closure → self → session).
        let bound = NIOLoopBound(self, eventLoop: loop)
        if isPolling {
            session.onPollingClose {
                bound.eventLoop.execute { bound.value.end() }
            }
        }
        session.onTokenExpiryChange {
            bound.eventLoop.execute { bound.value.tokenExpiryChanged() }
        }
        arm()
    }

    /// Handles one Engine.IO packet from the client.
    func received(_ packet: EngineIOPacket) {
        switch packet {
        case .message(let body):
            connection.enqueue(.packet(body))
        case .ping(let data):
            session.send(EngineIOPacket.pong(data).encoded())
        case .pong:
            // The next ping is due a whole interval from this pong: the timer moves.
            if heartbeat.pongReceived(now: .now()) { arm() }
        case .close:
            session.clientClosed()
            if isPolling { end() }
        case .open, .upgrade, .noop:
            break
        }
    }

    /// Handles one WebSocket message: a packet, or input answered in order with the packets.
    func received(_ input: EngineIOInput) {
        switch input {
        case .packet(let packet): received(packet)
        case .binaryFrame: connection.enqueue(.binaryFrame)
        case .refused(let error): connection.enqueue(.refused(error))
        }
    }

    /// The session now runs on a WebSocket connection, which reports its end.
    func upgraded() {
        isPolling = false
    }

    /// Closes the session from the server's side; a polling session ends here, a WebSocket one
    /// when its connection closes.
    func close(_ code: WebSocketErrorCode, reason: String) {
        session.close(code, reason: reason)
        if isPolling { end() }
    }

    /// The transport is gone: leaves everything, once.
    func end() {
        guard !hasEnded else { return }
        hasEnded = true
        timer?.cancel()
        session.onPollingClose(nil)
        session.onTokenExpiryChange(nil)
        session.connectionClosed()
        connection.enqueue(.disconnect)
        onEnd()
    }

    // MARK: Keep-alive

    /// The one timer runs at the heartbeat's next deadline or the token's, whichever comes first.
    private func arm() {
        timer?.cancel()
        timer = loop.assumeIsolated().scheduleTask(deadline: min(heartbeat.nextDeadline, tokenDeadline)) { [self] in tick() }
    }

    /// A CONNECT or `auth:refresh` set a new expiry: warned of anew, and the timer follows it.
    private func tokenExpiryChanged() {
        guard !hasEnded else { return }
        hasWarnedOfExpiry = false
        arm()
    }

    /// When the token needs the timer next: its warning, then its expiry.
    private var tokenDeadline: NIODeadline {
        let expiry = session.tokenExpiry.load(ordering: .relaxed)
        guard expiry != .max else { return .distantFuture }
        let due = hasWarnedOfExpiry ? expiry : expiry - expiryWarning
        let seconds = max(0, Double(due) - Date().timeIntervalSince1970)
        return .now() + .nanoseconds(Int64(seconds * 1_000_000_000))
    }

    private func tick() {
        guard !hasEnded else { return }
        let expiry = session.tokenExpiry.load(ordering: .relaxed)
        let now = Date().timeIntervalSince1970
        if now >= Double(expiry) {
            // As a server-side disconnect: socket.io-client then waits for the app to connect
            // again with a new token instead of retrying this one.
            session.send(SocketReply.errorEvent(RoomcastError(.tokenExpired, "token expired: connect again with a new token"), event: nil))
            session.send(SocketIOFrame.disconnect())
            return close(.normalClosure, reason: "token expired")
        }
        if !hasWarnedOfExpiry, expiry != .max, now >= Double(expiry - expiryWarning) {
            hasWarnedOfExpiry = true
            session.send(SocketReply.authExpiring(at: expiry))
        }
        switch heartbeat.tick(now: .now(), hasConnected: session.hasConnected.load(ordering: .relaxed)) {
        case .none:
            break
        case .sendPing:
            session.send(EngineIOPacket.ping(nil).encoded())
        case .closeForMissingConnect:
            return close(.policyViolation, reason: "no Socket.IO CONNECT within the connect timeout")
        case .closeForPingTimeout:
            return close(.goingAway, reason: "ping timeout")
        }
        arm()
    }
}

@available(*, unavailable)
extension EngineIOSession: Sendable {}

/// Engine.IO session ids name the node that holds the session: its id, then 20 random
/// characters. Any node can then tell where a poll belongs (see ``SessionForwarding``).
enum EngineIOSessionID {
    /// A new id for a session on `node`.
    static func make(on node: NodeID) -> String {
        node.rawValue + SocketConnection.randomID()
    }

    /// The node holding the session `sid`, or `nil` when `sid` is not one of ours.
    static func node(of sid: some StringProtocol) -> NodeID? {
        guard sid.utf8.count == NodeID.length + 20 else { return nil }
        return NodeID(sid.prefix(NodeID.length))
    }
}
