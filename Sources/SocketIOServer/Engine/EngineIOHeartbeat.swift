import NIOCore

/// Engine.IO v4's heartbeat and connect timeout for one session, as the reference server
/// (socketio/engine.io `lib/socket.ts`) runs them, with no clock or timer of its own.
///
/// The reference server sends a ping `pingInterval` after the session opens and again
/// `pingInterval` after each pong, and closes the session when the pong has not come
/// `pingTimeout` after its ping. Clients rely on that cadence: socket.io-client closes a
/// connection that has seen no ping for `pingInterval + pingTimeout`, so any slower cadence races
/// its timer. A pong that answers no ping changes nothing.
struct EngineIOHeartbeat {
    /// What the session must do now.
    enum Action: Equatable {
        case none
        case sendPing
        /// The client has not sent Socket.IO's CONNECT in time.
        case closeForMissingConnect
        /// The last ping was not answered in time.
        case closeForPingTimeout
    }

    private let pingInterval: TimeAmount
    private let pingTimeout: TimeAmount
    private let slack: TimeAmount
    /// Until the connect check has run: when it runs.
    private var connectDeadline: NIODeadline?
    private enum Phase {
        /// The next ping goes out then.
        case waiting(nextPing: NIODeadline)
        /// A ping is out; its pong must arrive by then.
        case awaitingPong(deadline: NIODeadline)
    }
    private var phase: Phase

    /// A heartbeat starting at `now`, the moment the open packet is sent.
    /// - Parameter slack: how late the session's timer may fire (``LoopTimerWheel``): a ping sent
    ///   within it of its time is answered by its time plus `pingTimeout`, as the reference's
    ///   own timer would have it; one sent later (a stalled loop) still gives the client its
    ///   timeout less the slack.
    /// - Parameter connectTimeout: nil when the application needs no CONNECT (an Engine.IO echo).
    init(now: NIODeadline, pingInterval: TimeAmount, pingTimeout: TimeAmount, connectTimeout: TimeAmount?, slack: TimeAmount = .zero) {
        self.pingInterval = pingInterval
        self.pingTimeout = pingTimeout
        self.slack = slack
        self.connectDeadline = connectTimeout.map { now + $0 }
        self.phase = .waiting(nextPing: now + pingInterval)
    }

    /// When ``tick(now:hasConnected:)`` must run next.
    var nextDeadline: NIODeadline {
        let heartbeat: NIODeadline
        switch phase {
        case .waiting(let nextPing): heartbeat = nextPing
        case .awaitingPong(let deadline): heartbeat = deadline
        }
        return min(connectDeadline ?? .distantFuture, heartbeat)
    }

    /// Whether a ping is out and unanswered.
    var isAwaitingPong: Bool {
        if case .awaitingPong = phase { return true }
        return false
    }

    /// The timer fired (or any time): what is due at `now`.
    /// - Parameter hasConnected: whether the client's Socket.IO CONNECT was accepted.
    mutating func tick(now: NIODeadline, hasConnected: Bool) -> Action {
        if let deadline = connectDeadline, now >= deadline {
            connectDeadline = nil
            if !hasConnected { return .closeForMissingConnect }
        }
        switch phase {
        case .awaitingPong(let deadline):
            return now >= deadline ? .closeForPingTimeout : .none
        case .waiting(let nextPing):
            guard now >= nextPing else { return .none }
            phase = .awaitingPong(deadline: max(nextPing + pingTimeout, now + pingTimeout - slack))
            return .sendPing
        }
    }

    /// The client sent a pong at `now`. Returns whether it answered the ping that was out (the
    /// next one is then due `pingInterval` from now); an unsolicited pong returns false.
    mutating func pongReceived(now: NIODeadline) -> Bool {
        guard case .awaitingPong = phase else { return false }
        phase = .waiting(nextPing: now + pingInterval)
        return true
    }
}
