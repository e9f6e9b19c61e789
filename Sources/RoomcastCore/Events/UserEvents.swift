import Logging
import NIOCore
public import RedisClient
import SocketIO

/// Per-user events: encoded once, appended to each recipient's event stream and published on
/// the recipient's user channel in one script (`user_event_publish.lua`), delivered by whichever
/// nodes hold that user's sockets. The stream lets a node read back what its pub/sub link missed.
public struct UserEvents: Sendable {
    private let redis: any RedisClientProtocol

    /// Creates a publisher over a client.
    public init(redis: any RedisClientProtocol) {
        self.redis = redis
    }

    /// Publishes event `name` with a payload of its own to each recipient (absolute counts differ
    /// per user), in one pipeline.
    public func publish(_ event: ServerEvent, _ payloads: [(UserID, some Encodable)]) async throws(RoomcastError) {
        let name = event.rawValue
        var frames: [(UserID, ByteBuffer)] = []
        frames.reserveCapacity(payloads.count)
        do {
            for (user, payload) in payloads {
                frames.append((user, SocketIOFrame.event(name: name, payload: try JSONCoding.encode(payload))))
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
            frame = SocketIOFrame.event(name: name, payload: try JSONCoding.encode(payload))
        } catch {
            throw RoomcastError(.internalError, "could not encode \(name)")
        }
        try await publish(recipients.map { ($0, frame) })
    }

    /// Runs the publishing script once per recipient, all at once (the client writes requests
    /// made in one event-loop tick together); a script Redis lost (a restart) is loaded again.
    private func publish(_ frames: [(UserID, ByteBuffer)]) async throws(RoomcastError) {
        if let failure = await attempt(frames).first?.error { throw RoomcastError(failure) }
    }

    /// Publishes each frame once, concurrently; answers the ones that failed, with their errors.
    private func attempt(_ frames: [(UserID, ByteBuffer)]) async -> [(user: UserID, frame: ByteBuffer, error: RedisError)] {
        guard !frames.isEmpty else { return [] }
        let redis = self.redis
        return await withTaskGroup(of: (UserID, ByteBuffer, RedisError)?.self) { group in
            for (user, frame) in frames {
                group.addTask { () -> (UserID, ByteBuffer, RedisError)? in
                    do throws(RedisError) {
                        _ = try await redis.evaluate(RoomcastScripts.userEventPublish, keys: [RedisKeys.userStream(user)], arguments: [RedisKeys.userChannel(user), frame])
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
    /// How long the per-user events of a committed change are retried, first try excluded:
    /// bounded, because the change's ack waits for them (issue #29 item 5).
    public static let committedRetryBudget: Duration = .milliseconds(300)

    private static let logger = Logger(label: "roomcast.user-events")

    /// ``publish(_:_:)`` for a change whose script has already committed: it never fails. The
    /// change is applied whatever happens here, and an error ack for it would have a client that
    /// retries without a `requestId` apply it twice (issue #29 item 5).
    ///
    /// Recipients whose publishing failed for a transient reason (their slot's master is down or
    /// failing over: `unavailable`) are tried again, only they, with a short backoff within
    /// ``committedRetryBudget``; then they are given up with a warning. A retry after a try whose
    /// reply alone was lost appends the event twice: harmless, the events carry absolute values.
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
            guard let json = try? JSONCoding.encode(payload) else {
                Self.logger.error("could not encode a committed change's user event", metadata: ["event": .string(event.rawValue)])
                return
            }
            frames.append((user, SocketIOFrame.event(name: event.rawValue, payload: json)))
        }
        await publishCommitted(event, frames)
    }

    /// ``publish(_:_:to:)`` for a change whose script has already committed: see
    /// ``publishCommitted(_:_:)``.
    public func publishCommitted(_ event: ServerEvent, _ payload: some Encodable, to recipients: [UserID]) async {
        guard let json = try? JSONCoding.encode(payload) else {
            Self.logger.error("could not encode a committed change's user event", metadata: ["event": .string(event.rawValue)])
            return
        }
        let frame = SocketIOFrame.event(name: event.rawValue, payload: json)
        await publishCommitted(event, recipients.map { ($0, frame) })
    }

    private func publishCommitted(_ event: ServerEvent, _ frames: [(UserID, ByteBuffer)]) async {
        let deadline = ContinuousClock.now + Self.committedRetryBudget
        var pending = await attempt(frames)
        var givenUp: [(user: UserID, frame: ByteBuffer, error: RedisError)] = []
        var retry = 0
        while true {
            // Only a Redis unavailable for now is worth another try (not a refusal, not a bug).
            givenUp += pending.filter { RoomcastError($0.error).code != .unavailable }
            pending.removeAll { RoomcastError($0.error).code != .unavailable }
            guard !pending.isEmpty else { break }
            retry += 1
            // 25, 50, 100, 200 ms …: the budget allows three or four retries.
            let delay = Duration.milliseconds(25 << min(retry - 1, 4))
            guard ContinuousClock.now + delay <= deadline, (try? await Task.sleep(for: delay)) != nil else { break }
            pending = await attempt(pending.map { ($0.user, $0.frame) })
        }
        givenUp += pending
        guard let first = givenUp.first else { return }
        Self.logger.warning(
            "a committed change's user event was not published; the users' next room listing carries what it said",
            metadata: [
                "event": .string(event.rawValue), "users": .string(givenUp.map(\.user.rawValue).joined(separator: ",")),
                "retries": .stringConvertible(retry), "error": .string("\(first.error)"),
            ]
        )
    }
}
