public import RedisClient

/// Chat messages: stored in the room's message stream and broadcast as `message:new`.
public struct MessageStore: Sendable {
    private let redis: RedisClient
    /// Messages kept per room (approximate, Redis trims whole stream nodes).
    public var messagesKept = 10_000
    /// Room events kept for recovery by offset (approximate).
    public var eventsKept = 1_000

    /// Creates a store over a client.
    public init(redis: RedisClient) {
        self.redis = redis
    }

    /// Sends a message from `sender` to room `roomId`: every socket in the room, on any node, gets
    /// `message:new {roomId, message, offset}`.
    /// - Returns: the stored message and its event's offset.
    /// - Throws: `invalid_payload` for empty or too long text, `forbidden`, `not_found`.
    public func send(_ text: String, from sender: User, to roomId: RoomID) async throws(RoomcastError) -> (message: Message, offset: String) {
        guard !text.isEmpty, text.count <= Message.maximumLength else {
            throw RoomcastError(.invalidPayload, "text must be 1-\(Message.maximumLength) characters")
        }
        let message = Message(
            id: .random(), roomId: roomId, userId: sender.id, text: text, createdAt: .now(), user: sender
        )
        let frame: RoomEventFrame
        do {
            frame = try RoomEventFrame(event: "message:new", payload: MessageNewPayload(roomId: roomId, message: message))
        } catch {
            throw RoomcastError(.internalError, "could not encode the message")
        }
        let reply = try await mappingRedisErrors { () throws(RedisError) in
            try await redis.evaluate(
                RoomcastScripts.messageSend,
                keys: [
                    RedisKeys.roomParticipants(roomId), RedisKeys.roomMessages(roomId),
                    RedisKeys.roomStream(roomId), RedisKeys.roomChannel(roomId),
                    RedisKeys.roomPresence(roomId), RedisKeys.roomUnseenMessages(roomId),
                ],
                arguments: [
                    sender.id.rawValue, message.id.rawValue, text, Int(message.createdAt.milliseconds),
                    frame.prefix, frame.suffix, messagesKept, eventsKept,
                ]
            )
        }
        guard let offset = reply.string else { throw RoomcastError(.internalError, "unexpected reply from message_send") }
        return (message, offset)
    }
}

/// `{roomId, message}` (the offset is added by the script).
struct MessageNewPayload: Encodable, Sendable {
    var roomId: RoomID
    var message: Message
}
