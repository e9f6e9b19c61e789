public import NIOCore
import SocketIO

/// What every session of an Engine.IO server is told in its open packet, and held to.
public struct EngineIOSettings: Sendable {
    /// A ping goes out this long after the open packet and after each pong.
    public var pingInterval: Duration
    /// A ping not answered within this closes the session.
    public var pingTimeout: Duration
    /// A session whose client the application has not accepted by then (Socket.IO's CONNECT) is
    /// closed; nil for an application that accepts every session as it opens (an Engine.IO echo).
    public var connectTimeout: Duration?
    /// The largest message or polling body a client may send, in bytes.
    public var maxPayload: Int
    /// What may wait for a poll, in bytes, before the client counts as too slow and the session
    /// closes.
    public var pollingQueueBytes: Int
    /// How long before a session's deadline its handler is warned
    /// (``EngineIOSessionHandler/deadlineApproaching(_:)``).
    public var deadlineWarning: Duration

    /// Settings with the reference server's defaults (a longer connect timeout, and a deadline
    /// warning a minute ahead).
    public init(
        pingInterval: Duration = .seconds(25), pingTimeout: Duration = .seconds(20), connectTimeout: Duration? = .seconds(45),
        maxPayload: Int = 1_000_000, pollingQueueBytes: Int = 4 * 1024 * 1024, deadlineWarning: Duration = .seconds(60)
    ) {
        self.pingInterval = pingInterval
        self.pingTimeout = pingTimeout
        self.connectTimeout = connectTimeout
        self.maxPayload = maxPayload
        self.pollingQueueBytes = pollingQueueBytes
        self.deadlineWarning = deadlineWarning
    }

    /// The open packet of session `sid`.
    /// - Parameter upgrades: the transports the client may upgrade to (`["websocket"]` when polling).
    func openPacket(_ sid: String, upgrades: [String]) -> ByteBuffer {
        EngineIOHandshake(
            sid: sid,
            upgrades: upgrades,
            pingInterval: Self.milliseconds(pingInterval),
            pingTimeout: Self.milliseconds(pingTimeout),
            maxPayload: maxPayload
        ).packet.encoded()
    }

    /// How late a session's timer may fire: a small part of the ping timeout (an eighth), at
    /// most a second and at least 5 ms. Sessions share one timer per event loop that wakes this
    /// often (``LoopTimerWheel``).
    var timerGranularity: TimeAmount {
        let eighth = Self.milliseconds(pingTimeout) / 8
        return .milliseconds(Int64(min(1000, max(5, eighth))))
    }

    static func milliseconds(_ duration: Duration) -> Int {
        let (seconds, attoseconds) = duration.components
        return Int(seconds) * 1000 + Int(attoseconds / 1_000_000_000_000_000)
    }
}
