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
        guard !frames.isEmpty else { return }
        let redis = self.redis
        let failure = await withTaskGroup(of: RedisError?.self) { group in
            for (user, frame) in frames {
                group.addTask { () -> RedisError? in
                    do throws(RedisError) {
                        _ = try await redis.evaluate(RoomcastScripts.userEventPublish, keys: [RedisKeys.userStream(user)], arguments: [RedisKeys.userChannel(user), frame])
                        return nil
                    } catch {
                        return error
                    }
                }
            }
            var first: RedisError?
            for await error in group where first == nil { first = error }
            return first
        }
        if let failure { throw RoomcastError(failure) }
    }
}
