import NIOCore
public import RedisClient
import SocketIO

/// Per-user events: encoded once, published on each recipient's user channel, delivered by
/// whichever nodes hold that user's sockets.
public struct UserEvents: Sendable {
    private let redis: RedisClient

    /// Creates a publisher over a client.
    public init(redis: RedisClient) {
        self.redis = redis
    }

    /// Publishes event `name` with a payload of its own to each recipient (absolute counts differ
    /// per user), in one pipeline.
    public func publish(_ name: String, _ payloads: [(UserID, some Encodable)]) async throws(RoomcastError) {
        guard !payloads.isEmpty else { return }
        var commands: [RedisCommand] = []
        commands.reserveCapacity(payloads.count)
        do {
            for (user, payload) in payloads {
                let frame = SocketIOFrame.event(name: name, payload: try JSONCoding.encode(payload))
                commands.append(RedisCommand("SPUBLISH", RedisKeys.userChannel(user), EventEnvelope.payload(frame: frame)))
            }
        } catch {
            throw RoomcastError(.internalError, "could not encode \(name)")
        }
        _ = try await mappingRedisErrors { () throws(RedisError) in try await redis.pipeline(commands) }
    }

    /// Publishes event `name` with `payload` to every socket of each user in `recipients`.
    public func publish(_ name: String, _ payload: some Encodable, to recipients: [UserID]) async throws(RoomcastError) {
        guard !recipients.isEmpty else { return }
        let envelope: ByteBuffer
        do {
            envelope = EventEnvelope.payload(frame: SocketIOFrame.event(name: name, payload: try JSONCoding.encode(payload)))
        } catch {
            throw RoomcastError(.internalError, "could not encode \(name)")
        }
        _ = try await mappingRedisErrors { () throws(RedisError) in
            try await redis.pipeline(recipients.map { RedisCommand("SPUBLISH", RedisKeys.userChannel($0), envelope) })
        }
    }
}
