public import NIOCore
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
        let sent = try await store(text, from: sender, to: roomId, requestId: requestId)
        guard sent.isReplay else { return (sent.message, sent.offset) }
        guard let original = try? JSONCoding.decode(Message.self, from: sent.json) else {
            throw RoomcastError(.internalError, "unreadable recorded message")
        }
        return (original, sent.offset)
    }

    /// ``send(_:from:to:requestId:)`` answering the message as client JSON: the bytes encoded
    /// once for the room's event and a retry's record (a socket's ack splices them).
    public func sendJSON(
        _ text: String, from sender: User, to roomId: RoomID, requestId: RequestID? = nil
    ) async throws(RoomcastError) -> (message: ByteBuffer, offset: String) {
        let sent = try await store(text, from: sender, to: roomId, requestId: requestId)
        return (sent.json, sent.offset)
    }

    /// A stored message: the one sent now, or the first one sent with the same request id.
    private struct Stored {
        var message: Message
        var json: ByteBuffer
        var offset: String
        /// `json` is the message first sent with the request id, not `message`.
        var isReplay: Bool
    }

    private func store(_ text: String, from sender: User, to roomId: RoomID, requestId: RequestID?) async throws(RoomcastError) -> Stored {
        guard !text.isEmpty, text.utf8.count <= maxTextLength else {
            throw RoomcastError(.invalidPayload, "text must be 1-\(maxTextLength) bytes of UTF-8")
        }
        let message = Message(
            id: .random(), roomId: roomId, userId: sender.id, text: text, createdAt: .now(), user: sender
        )
        // The message is encoded once: for the event, the retry's record and the answer.
        let messageJSON: ByteBuffer
        let frame: RoomEventFrame
        do {
            messageJSON = try JSONCoding.encode(message)
            frame = try RoomEventFrame(event: ServerEvent.messageNew.rawValue, object: Self.newMessagePayload(messageJSON, in: roomId))
        } catch {
            throw RoomcastError(.internalError, "could not encode the message")
        }
        let sent = try await redis.call(
            RoomcastFunctions.MessageSend(
                room: roomId, sender: sender.id, message: message.id, text: text, now: message.createdAt, frame: frame, json: messageJSON,
                eventsKept: eventsKept, messagesKept: messagesKept, request: requestId
            )
        )
        return Stored(message: message, json: sent.replayed ?? messageJSON, offset: sent.offset, isReplay: sent.isReplay)
    }

    /// `{"message":<message JSON>,"roomId":"<id>"}`: what ``MessageNewPayload`` encodes to, keys
    /// sorted as ``JSONCoding`` sorts them, around the message's bytes encoded once. A room id is
    /// an identifier: nothing in it to escape.
    static func newMessagePayload(_ message: ByteBuffer, in roomId: RoomID) -> ByteBuffer {
        var payload = ByteBuffer()
        payload.reserveCapacity(message.readableBytes + roomId.rawValue.utf8.count + 24)
        payload.writeStaticString(#"{"message":"#)
        payload.writeImmutableBuffer(message)
        payload.writeStaticString(#","roomId":""#)
        payload.writeString(roomId.rawValue)
        payload.writeStaticString(#""}"#)
        return payload
    }
}

/// `{roomId, message}` (the offset is added by the script).
struct MessageNewPayload: Encodable, Sendable {
    var roomId: RoomID
    var message: Message
}
