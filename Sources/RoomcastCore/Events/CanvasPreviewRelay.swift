public import RedisClient

/// Relays canvas previews to a room: one `SPUBLISH` on the room's channel, nothing stored.
public struct CanvasPreviewRelay: Sendable {
    private let redis: any RedisClientProtocol

    /// Creates a relay over a client.
    public init(redis: any RedisClientProtocol) {
        self.redis = redis
    }

    /// Sends `preview` from `user`'s socket `socket` to the room's other sockets on every node.
    public func publish(_ preview: CanvasPreview, from user: UserID, socket: String) async throws(RoomcastError) {
        let payload = EventEnvelope.volatilePayload(frame: preview.frame(from: user), from: socket)
        _ = try await mappingRedisErrors { () throws(RedisError) in
            try await redis.send(RedisCommand("SPUBLISH", RedisKeys.roomChannel(preview.room), payload))
        }
    }
}
