import NIOCore
public import RedisClient
import SocketIO

/// Per-user events: encoded once, appended to each recipient's event stream and published on
/// the recipient's user channel in one script (`user_event_publish.lua`), delivered by whichever
/// nodes hold that user's sockets. The stream lets a node read back what its pub/sub link missed.
public struct UserEvents: Sendable {
    private let redis: RedisClient

    /// Creates a publisher over a client.
    public init(redis: RedisClient) {
        self.redis = redis
    }

    /// Publishes event `name` with a payload of its own to each recipient (absolute counts differ
    /// per user), in one pipeline.
    public func publish(_ name: String, _ payloads: [(UserID, some Encodable)]) async throws(RoomcastError) {
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
    public func publish(_ name: String, _ payload: some Encodable, to recipients: [UserID]) async throws(RoomcastError) {
        let frame: ByteBuffer
        do {
            frame = SocketIOFrame.event(name: name, payload: try JSONCoding.encode(payload))
        } catch {
            throw RoomcastError(.internalError, "could not encode \(name)")
        }
        try await publish(recipients.map { ($0, frame) })
    }

    /// Runs the publishing script once per recipient in one pipeline; a script Redis lost (a
    /// restart) is loaded again by running it alone.
    private func publish(_ frames: [(UserID, ByteBuffer)]) async throws(RoomcastError) {
        guard !frames.isEmpty else { return }
        let script = RoomcastScripts.userEventPublish
        try await mappingRedisErrors { () throws(RedisError) in
            let replies = try await redis.pipeline(frames.map { user, frame in
                let channel = RedisKeys.userChannel(user)
                return RedisCommand("EVALSHA", [script.sha1, 1, channel, frame], keys: [channel])
            })
            for ((user, frame), reply) in zip(frames, replies) {
                guard case .error(let message) = reply else { continue }
                guard message.hasPrefix("NOSCRIPT") else { throw RedisError(.reply, message) }
                _ = try await redis.evaluate(script, keys: [RedisKeys.userChannel(user)], arguments: [frame])
            }
        }
    }
}
