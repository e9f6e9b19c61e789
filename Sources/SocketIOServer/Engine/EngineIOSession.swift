import Foundation
public import NIOCore
public import NIOWebSocket
public import SocketIO
import Synchronization

/// Engine.IO v4 for one session, whatever carries it (WebSocket, or long-polling until it
/// upgrades): the open packet, pings and the connect timeout, on the session's event loop;
/// messages go on to the application's handler.
public final class EngineIOSession {
    public let session: SocketSession
    private let handler: any EngineIOSessionHandler
    /// Called once when the session ends (to forget a polling session).
    private let onEnd: () -> Void
    /// Served by long-polling (not upgraded): nothing else tells the node that it ended.
    private var isPolling: Bool
    private var hasEnded = false
    /// The session's one deadline on its loop's wheel (the connect timeout, the next ping, the
    /// check that the last ping was answered, or the credential's): arming again moves it, ending
    /// removes it.
    private let wheel: LoopTimerWheel<EngineIOSession>
    var timerPosition: LoopTimerPosition?
    private var heartbeat: EngineIOHeartbeat
    /// The handler was warned of the credential's current expiry.
    private var hasWarnedOfExpiry = false
    private let expiryWarning: Int64

    /// Starts a session: sends the open packet and arms the timers. Call on `loop`.
    /// - Parameter upgrades: the transports the client may upgrade to (`["websocket"]` when polling).
    init(
        session: SocketSession, handler: any EngineIOSessionHandler, settings: EngineIOSettings, wheel: LoopTimerWheel<EngineIOSession>, loop: any EventLoop,
        upgrades: [String], onEnd: @escaping () -> Void = {}
    ) {
        self.session = session
        self.handler = handler
        self.wheel = wheel
        self.onEnd = onEnd
        self.isPolling = !upgrades.isEmpty
        self.expiryWarning = Int64(EngineIOSettings.milliseconds(settings.expiryWarning) / 1000)
        self.heartbeat = EngineIOHeartbeat(
            now: .now(), pingInterval: .init(settings.pingInterval), pingTimeout: .init(settings.pingTimeout),
            connectTimeout: .init(settings.connectTimeout), slack: settings.timerGranularity
        )
        session.send(settings.openPacket(session.id, upgrades: upgrades))
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
    public func received(_ packet: EngineIOPacket) {
        switch packet {
        case .message(let body):
            handler.received(.message(body))
        case .binary(let data):
            handler.received(.binary(data))
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
    public func received(_ input: EngineIOInput) {
        switch input {
        case .packet(let packet): received(packet)
        case .undecodable(let reason): handler.received(.undecodable(reason: reason))
        }
    }

    /// The session now runs on a WebSocket connection, which reports its end.
    public func upgraded() {
        isPolling = false
    }

    /// Closes the session from the server's side; a polling session ends here, a WebSocket one
    /// when its connection closes.
    public func close(_ code: WebSocketErrorCode, reason: String) {
        session.close(code, reason: reason)
        if isPolling { end() }
    }

    /// The server is going away (a drain). A client must take this as a lost transport, not as
    /// a goodbye: Engine.IO's close packet (or Socket.IO's DISCONNECT) tells python-socketio that
    /// the server ended the session on purpose, and it does not reconnect, while every client
    /// reconnects after a transport error. So a WebSocket closes with 1001 and no close packet,
    /// and a polling session ends here: its pending poll fails, answered with an HTTP error
    /// status (``EngineIORoutes``), and any later request of it finds no session.
    public func drain() {
        guard isPolling else { return close(.goingAway, reason: "server shutting down") }
        end()
    }

    /// The transport is gone: tells the handler, once.
    public func end() {
        guard !hasEnded else { return }
        hasEnded = true
        wheel.cancel(self)
        session.onPollingClose(nil)
        session.onTokenExpiryChange(nil)
        session.connectionClosed()
        handler.received(.ended)
        onEnd()
    }

    // MARK: Keep-alive

    /// The one deadline is the heartbeat's next or the credential's, whichever comes first.
    private func arm() {
        wheel.schedule(self, at: min(heartbeat.nextDeadline, tokenDeadline))
    }

    /// Runs what is due now, whether or not the wheel has come to it yet (a poll arrived: it must
    /// not find a session that has timed out still open).
    /// - Returns: whether the session is still open.
    public func runDueTimers() -> Bool {
        if !hasEnded, NIODeadline.now() >= min(heartbeat.nextDeadline, tokenDeadline) { tick() }
        return !hasEnded
    }

    /// The wheel served the session's deadline.
    func timerFired() {
        tick()
    }

    /// The application set a new expiry: warned of anew, and the timer follows it.
    private func tokenExpiryChanged() {
        guard !hasEnded else { return }
        hasWarnedOfExpiry = false
        arm()
    }

    /// When the credential needs the timer next: its warning, then its expiry.
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
            handler.credentialExpired()
            return close(.normalClosure, reason: "token expired")
        }
        if !hasWarnedOfExpiry, expiry != .max, now >= Double(expiry - expiryWarning) {
            hasWarnedOfExpiry = true
            handler.credentialExpiring(at: expiry)
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
