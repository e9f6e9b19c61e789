import Logging
import NIOCore
public import RedisClient
import SocketIO
import Synchronization

/// Per-user events: encoded once, appended to each recipient's event stream and published to
/// the nodes holding the recipient's sockets in one script (`user_event_publish.lua`). The stream
/// lets a node read back what its pub/sub link missed.
public struct UserEvents: Sendable {
    private let redis: any RedisClientProtocol
    /// How long a committed change's ack waits for its events' first try, and how long they are
    /// retried.
    private let ackWait: Duration
    private let retryWindow: Duration

    /// Creates a publisher over a client.
    public init(
        redis: any RedisClientProtocol, committedAckWait: Duration = UserEvents.committedAckWait,
        committedRetryWindow: Duration = UserEvents.committedRetryWindow
    ) {
        self.redis = redis
        self.ackWait = committedAckWait
        self.retryWindow = committedRetryWindow
    }

    /// A per-user event's frame, `42["<event>",<payload>]`: the bytes published to the user's
    /// channel, and sent as they are to one socket.
    static func frame(_ event: ServerEvent, _ payload: some Encodable) throws -> ByteBuffer {
        SocketIOFrame.event(name: event.rawValue, payload: try JSONCoding.encode(payload))
    }

    /// Publishes event `name` with a payload of its own to each recipient (absolute counts differ
    /// per user), in one pipeline.
    public func publish(_ event: ServerEvent, _ payloads: [(UserID, some Encodable)]) async throws(RoomcastError) {
        let name = event.rawValue
        var frames: [(UserID, ByteBuffer)] = []
        frames.reserveCapacity(payloads.count)
        do {
            for (user, payload) in payloads {
                frames.append((user, try Self.frame(event, payload)))
            }
        } catch {
            throw RoomcastError(.internalError, "could not encode \(name)")
        }
        try await publish(frames)
    }

    /// Publishes event `name` with `payload` to every socket of each user in `recipients`.
    public func publish(_ event: ServerEvent, _ payload: some Encodable, to recipients: [UserID]) async throws(RoomcastError) {
        let name = event.rawValue
        let frame: ByteBuffer
        do {
            frame = try Self.frame(event, payload)
        } catch {
            throw RoomcastError(.internalError, "could not encode \(name)")
        }
        try await publish(recipients.map { ($0, frame) })
    }

    /// Runs the publishing script once per recipient, all at once (the client writes requests
    /// made in one event-loop tick together); a library Redis lost (a restart) is loaded again.
    private func publish(_ frames: [(UserID, ByteBuffer)]) async throws(RoomcastError) {
        if let failure = await attempt(frames).first?.error { throw RoomcastError(failure) }
    }

    /// Publishes each frame once, concurrently, each within `timeout` (the client's command
    /// timeout when `nil`); answers the ones that failed, with their errors.
    /// - Parameter isRetry: the frames were tried before; the script does not append one that an
    ///   earlier try appended after all (its reply lost).
    private func attempt(
        _ frames: [(UserID, ByteBuffer)], timeout: Duration? = nil, isRetry: Bool = false
    ) async -> [(user: UserID, frame: ByteBuffer, error: RedisError)] {
        guard !frames.isEmpty else { return [] }
        let redis = self.redis
        let routing = NodeEventRouting(redis.configuration)
        return await withTaskGroup(of: (UserID, ByteBuffer, RedisError)?.self) { group in
            for (user, frame) in frames {
                group.addTask { () -> (UserID, ByteBuffer, RedisError)? in
                    do throws(RedisError) {
                        _ = try await redis.run(RoomcastFunctions.UserEventPublish(user: user, routing: routing, frame: frame, isRetry: isRetry), timeout: timeout)
                        return nil
                    } catch {
                        return (user, frame, error)
                    }
                }
            }
            var failed: [(user: UserID, frame: ByteBuffer, error: RedisError)] = []
            for await case let (user, frame, error)? in group { failed.append((user, frame, error)) }
            return failed
        }
    }
}

// MARK: After a commit

extension UserEvents {
    /// How long a committed change's ack waits, by default, for the first try of its per-user
    /// events: the events of a Redis that answers come well within it, and are sent before the
    /// ack as ever. Past it, or once that try has failed, the ack goes and the events follow when
    /// they can.
    public static let committedAckWait: Duration = .milliseconds(500)

    /// How long the per-user events of a committed change are retried, counted from the change:
    /// a master's failover (flagged after `cluster-node-timeout`, its replica promoted about a
    /// second later) fits in it.
    public static let committedRetryWindow: Duration = .seconds(15)

    /// The most committed changes whose per-user events are still being published: past it, a
    /// change's events get one try of ``committedAckWait`` and no more, so a long outage cannot
    /// pile up tasks and frames.
    public static let maximumCommittedInFlight = 1_000

    private static let committedInFlight = Atomic<Int>(0)

    private static let logger = Logger(label: "roomcast.user-events")

    /// ``publish(_:_:)`` for a change whose script has already committed: it never fails. The
    /// change is applied whatever happens here, and an error ack for it would have a client that
    /// retries without a `requestId` apply it twice.
    ///
    /// The events are published by a task of their own, whose first try the caller waits for,
    /// at most ``committedAckWait``. That task tries recipients whose publishing failed for a transient
    /// reason (their slot's master is down or failing over: `unavailable`) again, only they,
    /// with a backoff, for ``committedRetryWindow``; then they are given up with a warning. So
    /// an event can come after the ack, and after a later event of the same user that had no
    /// trouble: harmless for what they carry (absolute counts, a whole room), which the next
    /// event or listing makes current again. A retry after a try whose reply alone was lost
    /// finds its frame among the stream's last entries and appends nothing.
    ///
    /// What carries a given-up event: not the user stream's gap repair. `SocketHub.repair` reads
    /// back (`GapLogs` → ``UserEventLog`` → `StreamBackfill`) the events appended to
    /// `user:{id}:stream` that a node's pub/sub link missed, and this event never reached the
    /// stream: appending and publishing are one script (`user_event_publish.lua`) that did not run.
    /// The change itself is not lost with it: the committed script stored it in the room's slot,
    /// with the room's own event where there is one (`element:created`, `element:deleted`,
    /// `room:cleared`), which the room's sockets get live or from the room stream's replay; and
    /// what the user event would have said (a room's name or participants, `room:{id}:unseen`'s
    /// counts) is what the user's next room listing (`/api/rooms/my-rooms`, an app's reconnect)
    /// reads. Until then that user's screens outside the room show the previous name or badge.
    public func publishCommitted(_ event: ServerEvent, _ payloads: [(UserID, some Encodable)]) async {
        var frames: [(UserID, ByteBuffer)] = []
        frames.reserveCapacity(payloads.count)
        for (user, payload) in payloads {
            guard let frame = try? Self.frame(event, payload) else {
                Self.logger.error("could not encode a committed change's user event", metadata: ["event": .string(event.rawValue)])
                return
            }
            frames.append((user, frame))
        }
        await publishCommitted(event, frames)
    }

    /// ``publish(_:_:to:)`` for a change whose script has already committed: see
    /// ``publishCommitted(_:_:)``.
    public func publishCommitted(_ event: ServerEvent, _ payload: some Encodable, to recipients: [UserID]) async {
        guard let frame = try? Self.frame(event, payload) else {
            Self.logger.error("could not encode a committed change's user event", metadata: ["event": .string(event.rawValue)])
            return
        }
        await publishCommitted(event, recipients.map { ($0, frame) })
    }

    private func publishCommitted(_ event: ServerEvent, _ frames: [(UserID, ByteBuffer)]) async {
        guard !frames.isEmpty else { return }
        let start = ContinuousClock.now
        guard Self.committedInFlight.add(1, ordering: .relaxed).newValue <= Self.maximumCommittedInFlight else {
            Self.committedInFlight.subtract(1, ordering: .relaxed)
            let failed = await attempt(frames, timeout: ackWait)
            if !failed.isEmpty { Self.giveUp(event, failed, retries: 0, why: "too many changes' events are being retried") }
            return
        }
        // Not a child task: the events go on being published after the ack (a task group would
        // wait for them), and a request that is cancelled (its socket closed) does not cancel
        // them. The caller goes on when they are published or the wait is over.
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let gate = AckGate(continuation)
            let timer = Task {
                try? await Task.sleep(for: ackWait)
                gate.open()
            }
            Task {
                await self.deliver(event, frames, until: start + retryWindow, afterFirstAttempt: gate.open)
                Self.committedInFlight.subtract(1, ordering: .relaxed)
                gate.open()
                timer.cancel()
            }
        }
    }

    /// Publishes `frames`, retrying the recipients Redis could not be reached for until `end`.
    /// - Parameter afterFirstAttempt: called once the first try is over, whatever it gave: the
    ///   ack waits for that try only. A master known to be down fails it at once, and the socket
    ///   (whose events are handled in order) must not wait out the retries: its changes in rooms
    ///   on healthy masters would stall behind them.
    private func deliver(
        _ event: ServerEvent, _ frames: [(UserID, ByteBuffer)], until end: ContinuousClock.Instant, afterFirstAttempt: () -> Void
    ) async {
        var pending = await attempt(frames, timeout: nil)
        afterFirstAttempt()
        var givenUp: [(user: UserID, frame: ByteBuffer, error: RedisError)] = []
        var retry = 0
        while true {
            // Only a Redis unavailable for now is worth another try (not a refusal, not a bug,
            // not a client shut down).
            let transient = { (error: RedisError) in error.code != .clientShutdown && RoomcastError(error).code == .unavailable }
            givenUp += pending.filter { !transient($0.error) }
            pending.removeAll { !transient($0.error) }
            guard !pending.isEmpty else { break }
            retry += 1
            // 50, 100, 200 … 1,600 ms, then every 2 s.
            let delay = min(Duration.milliseconds(50 << min(retry - 1, 5)), .seconds(2))
            guard ContinuousClock.now + delay < end else { break }
            try? await Task.sleep(for: delay)
            pending = await attempt(pending.map { ($0.user, $0.frame) }, timeout: nil, isRetry: true)
        }
        givenUp += pending
        if !givenUp.isEmpty { Self.giveUp(event, givenUp, retries: retry, why: nil) }
    }

    private static func giveUp(_ event: ServerEvent, _ failed: [(user: UserID, frame: ByteBuffer, error: RedisError)], retries: Int, why: String?) {
        var metadata: Logger.Metadata = [
            "event": .string(event.rawValue), "users": .string(failed.map(\.user.rawValue).joined(separator: ",")),
            "retries": .stringConvertible(retries), "error": .string("\(failed[0].error)"),
        ]
        if let why { metadata["reason"] = .string(why) }
        logger.warning("a committed change's user event was not published; the users' next room listing carries what it said", metadata: metadata)
    }
}

/// Resumes a waiting caller once, whichever of its wakers comes first.
private final class AckGate: Sendable {
    private let continuation: Mutex<CheckedContinuation<Void, Never>?>

    init(_ continuation: CheckedContinuation<Void, Never>) {
        self.continuation = Mutex(continuation)
    }

    func open() {
        continuation.withLock { $0.take() }?.resume()
    }
}
