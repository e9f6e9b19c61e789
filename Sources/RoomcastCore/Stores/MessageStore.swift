import NIOCore
public import RedisClient

/// Chat messages: stored in the room's message stream and broadcast as `message:new`.
public struct MessageStore: Sendable {
    let redis: any RedisClientProtocol
    /// Messages kept per room, `messages.kept_per_room`: exactly, the oldest go first.
    public var messagesKept = 10_000
    /// Room events kept for recovery by offset (approximate).
    public var eventsKept = 1_000
    /// Longest message text, in characters.
    public var maxTextLength = Message.defaultMaximumLength

    /// Creates a store over a client.
    public init(redis: any RedisClientProtocol) {
        self.redis = redis
    }

    /// Sends a message from `sender` to room `roomId`: every socket in the room, on any node, gets
    /// `message:new {roomId, message, offset}`.
    /// - Returns: the stored message and its event's offset.
    /// - Throws: `invalid_payload` for empty or too long text, `forbidden`, `not_found`.
    /// - Parameter requestId: a client's id for this message: a retry with the same id returns the
    ///   message sent the first time and sends nothing.
    public func send(
        _ text: String, from sender: User, to roomId: RoomID, requestId: RequestID? = nil
    ) async throws(RoomcastError) -> (message: Message, offset: String) {
        guard !text.isEmpty, text.utf8.count <= maxTextLength else {
            throw RoomcastError(.invalidPayload, "text must be 1-\(maxTextLength) bytes of UTF-8")
        }
        let message = Message(
            id: .random(), roomId: roomId, userId: sender.id, text: text, createdAt: .now(), user: sender
        )
        let frame: RoomEventFrame
        let messageJSON: String
        do {
            frame = try RoomEventFrame(event: .messageNew, payload: MessageNewPayload(roomId: roomId, message: message))
            messageJSON = String(buffer: try JSONCoding.encode(message))
        } catch {
            throw RoomcastError(.internalError, "could not encode the message")
        }
        // The presence scripts' key layout (the script takes expired sockets out first).
        var keys = [
            RedisKeys.room(roomId), RedisKeys.roomParticipants(roomId), RedisKeys.roomPresence(roomId),
            RedisKeys.roomStream(roomId), RedisKeys.roomChannel(roomId), RedisKeys.roomMessageReads(roomId),
            RedisKeys.roomMessages(roomId),
        ]
        if let requestId { keys.append(RedisKeys.roomRequest(roomId, user: sender.id, operation: .messageSend, request: requestId)) }
        let reply = try await mappingRedisErrors { () throws(RedisError) in
            try await redis.evaluate(
                RoomcastScripts.messageSend,
                keys: keys,
                arguments: [
                    // now, (expiry: unused here), events kept, room id, as presence scripts take them
                    Int(message.createdAt.milliseconds), Int(message.createdAt.milliseconds), eventsKept, roomId.rawValue,
                    sender.id.rawValue, message.id.rawValue, text, frame.prefix, frame.suffix, messagesKept, messageJSON,
                ]
            )
        }
        let outcome = try MutationReply(reply)
        guard case .array(let parts) = outcome.reply, parts.count == 2, let offset = parts[0].string, case .bulk(let stored) = parts[1] else {
            throw RoomcastError(.internalError, "unexpected reply from message_send")
        }
        guard outcome.isReplay else { return (message, offset) }
        guard let original = try? JSONCoding.decode(Message.self, from: stored) else {
            throw RoomcastError(.internalError, "unreadable recorded message")
        }
        return (original, offset)
    }
}

/// `{roomId, message}` (the offset is added by the script).
struct MessageNewPayload: Encodable, Sendable {
    var roomId: RoomID
    var message: Message
}
