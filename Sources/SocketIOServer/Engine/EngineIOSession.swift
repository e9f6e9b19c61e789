import Foundation
public import NIOCore
public import NIOWebSocket
public import SocketIO
import Synchronization

/// Engine.IO v4 for one session, whatever carries it (WebSocket, or long-polling until it
/// upgrades): the open packet, pings, the connect timeout and the deadline, on the session's
/// event loop; messages go on to the application's handler.
final class EngineIOSession {
    let session: EngineIOConnection
    private let handler: any EngineIOSessionHandler
    /// Called once when the session ends (to forget a polling session).
    private let onEnd: () -> Void
    /// Served by long-polling (not upgraded): nothing else tells the node that it ended.
    private var isPolling: Bool
    private var hasEnded = false
    /// Why the session is closing, once the first reason is known.
    private var closeReason: EngineIOCloseReason?
    /// The session's one deadline on its loop's wheel (the connect timeout, the next ping, the
    /// check that the last ping was answered, or the session's deadline): arming again moves it, ending
    /// removes it.
    private let wheel: LoopTimerWheel<EngineIOSession>
    var timerPosition: LoopTimerPosition?
    private var heartbeat: EngineIOHeartbeat
    /// The handler was warned of the current deadline.
    private var hasWarnedOfDeadline = false
    /// Milliseconds.
    private let deadlineWarning: Int64
    private let hasConnectTimeout: Bool

    /// Starts a session: sends the open packet and arms the timers. Call on `loop`.
    /// - Parameter upgrades: the transports the client may upgrade to (`["websocket"]` when polling).
    init(
        session: EngineIOConnection, handler: any EngineIOSessionHandler, settings: EngineIOSettings, wheel: LoopTimerWheel<EngineIOSession>, loop: any EventLoop,
        upgrades: [String], onEnd: @escaping () -> Void = {}
    ) {
        self.session = session
        self.handler = handler
        self.wheel = wheel
        self.onEnd = onEnd
        self.isPolling = !upgrades.isEmpty
        self.deadlineWarning = Int64(EngineIOSettings.milliseconds(settings.deadlineWarning))
        self.hasConnectTimeout = settings.connectTimeout != nil
        self.heartbeat = EngineIOHeartbeat(
            now: .now(), pingInterval: .init(settings.pingInterval), pingTimeout: .init(settings.pingTimeout),
            connectTimeout: settings.connectTimeout.map(TimeAmount.init), slack: settings.timerGranularity
        )
        session.send(settings.openPacket(session.id, upgrades: upgrades))
        // Until `end()`, which breaks these cycles (session → closure → self → session).
        let bound = NIOLoopBound(self, eventLoop: loop)
        if isPolling {
            session.onPollingClose {
                bound.eventLoop.execute { bound.value.end() }
            }
        }
        session.onDeadlineChange {
            bound.eventLoop.execute { bound.value.deadlineChanged() }
        }
        arm()
    }

    /// Handles one Engine.IO packet from the client.
    func received(_ packet: EngineIOPacket) {
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
            if closeReason == nil { closeReason = .clientClosed }
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
        case .undecodable(let reason): handler.received(.undecodable(reason: reason))
        }
    }

    /// The session now runs on a WebSocket connection, which reports its end.
    func upgraded() {
        isPolling = false
    }

    /// Closes the session from the server's side; a polling session ends here, a WebSocket one
    /// when its connection closes.
    func close(_ code: WebSocketErrorCode, reason: String, because why: EngineIOCloseReason) {
        if closeReason == nil { closeReason = why }
        session.close(code, reason: reason)
        if isPolling { end() }
    }

    /// The server is going away (a drain). A client must take this as a lost transport, not as
    /// a goodbye: Engine.IO's close packet (or Socket.IO's DISCONNECT) tells python-socketio that
    /// the server ended the session on purpose, and it does not reconnect, while every client
    /// reconnects after a transport error. So a WebSocket closes with 1001 and no close packet,
    /// and a polling session ends here: its pending poll fails, answered with an HTTP error
    /// status (``EngineIORoutes``), and any later request of it finds no session.
    func drain() {
        guard isPolling else { return close(.goingAway, reason: "server shutting down", because: .serverShutdown) }
        if closeReason == nil { closeReason = .serverShutdown }
        end()
    }

    /// The transport is gone: tells the handler, once.
    func end() {
        guard !hasEnded else { return }
        hasEnded = true
        wheel.cancel(self)
        session.onPollingClose(nil)
        session.onDeadlineChange(nil)
        session.connectionClosed()
        handler.received(.ended(closeReason ?? .transportClosed))
        onEnd()
    }

    // MARK: Keep-alive

    /// The one timer is the heartbeat's next or the session deadline's, whichever comes first.
    private func arm() {
        wheel.schedule(self, at: min(heartbeat.nextDeadline, deadlineTimer))
    }

    /// Runs what is due now, whether or not the wheel has come to it yet (a poll arrived: it must
    /// not find a session that has timed out still open).
    /// - Returns: whether the session is still open.
    func runDueTimers() -> Bool {
        if !hasEnded, NIODeadline.now() >= min(heartbeat.nextDeadline, deadlineTimer) { tick() }
        return !hasEnded
    }

    /// The wheel served the session's deadline.
    func timerFired() {
        tick()
    }

    /// The application set a new deadline: warned of anew, and the timer follows it.
    private func deadlineChanged() {
        guard !hasEnded else { return }
        hasWarnedOfDeadline = false
        arm()
    }

    /// When the deadline needs the timer next: its warning, then the deadline itself.
    private var deadlineTimer: NIODeadline {
        let deadline = session.deadline.load(ordering: .relaxed)
        guard deadline != .max else { return .distantFuture }
        let due = hasWarnedOfDeadline ? deadline : deadline - deadlineWarning
        let milliseconds = max(0, due - Self.nowMilliseconds)
        return .now() + .milliseconds(milliseconds)
    }

    private static var nowMilliseconds: Int64 { Int64((Date().timeIntervalSince1970 * 1000).rounded(.down)) }

    private func tick() {
        guard !hasEnded else { return }
        let deadline = session.deadline.load(ordering: .relaxed)
        if deadline != .max {
            let now = Self.nowMilliseconds
            if now >= deadline {
                handler.deadlineReached()
                return close(.normalClosure, reason: "session deadline reached", because: .deadline)
            }
            if !hasWarnedOfDeadline, now >= deadline - deadlineWarning {
                hasWarnedOfDeadline = true
                handler.deadlineApproaching(Date(timeIntervalSince1970: Double(deadline) / 1000))
            }
        }
        let hasConnected = !hasConnectTimeout || session.hasConnected.load(ordering: .relaxed)
        switch heartbeat.tick(now: .now(), hasConnected: hasConnected) {
        case .none:
            break
        case .sendPing:
            session.send(EngineIOPacket.ping(nil).encoded())
        case .closeForMissingConnect:
            return close(.policyViolation, reason: "no Socket.IO CONNECT within the connect timeout", because: .connectTimeout)
        case .closeForPingTimeout:
            return close(.goingAway, reason: "ping timeout", because: .pingTimeout)
        }
        arm()
    }
}

@available(*, unavailable)
extension EngineIOSession: Sendable {}
