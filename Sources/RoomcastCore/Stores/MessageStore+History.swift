import NIOCore
public import RedisClient

extension MessageStore {
    /// A page of room `room`'s chat history for participant `reader`, newest first.
    ///
    /// Messages are read from the room's message stream (`room:{<roomId>}:messages`, about
    /// ``messagesKept`` kept); each carries its sender's current public profile.
    /// - Parameters:
    ///   - cursor: the previous page's `nextCursor` (a stream offset); `nil` for the newest page.
    ///   - limit: the most messages on the page (at least 1).
    /// - Throws: `not_found`, `forbidden` for a non-participant, `invalid_payload` for a cursor
    ///   that is not an offset.
    public func history(of room: RoomID, for reader: UserID, before cursor: String?, limit: Int) async throws(RoomcastError) -> MessagePage {
        let limit = max(limit, 1)
        var end = "+"
        var beforeFirst = false
        if let cursor {
            guard let offset = StreamOffset(cursor) else { throw RoomcastError(.invalidPayload, "cursor is not a cursor of this list") }
            // Nothing comes before 0-0, and Redis refuses it as an exclusive end ("invalid start
            // ID for the interval"): that was a 500 (schemathesis found it).
            beforeFirst = offset.milliseconds == 0 && offset.sequence == 0
            end = "(\(offset)"
        }
        switch try await RoomStore(redis: redis).membership(of: reader, in: room) {
        case .noSuchRoom: throw RoomcastError(.notFound, "room not found")
        case .notParticipant: throw RoomcastError(.forbidden, "not a participant of this room")
        case .participant: break
        }
        if beforeFirst { return MessagePage(messages: [], nextCursor: nil) }
        let reply = try await mappingRedisErrors { () throws(RedisError) in
            try await redis.send(RedisCommand("XREVRANGE", RedisKeys.roomMessages(room), end, "-", "COUNT", limit + 1))
        }
        guard case .array(let replies) = reply else { throw RoomcastError(.internalError, "unexpected reply reading messages") }
        let entries = replies.compactMap(RedisStreamEntry.init)
        let page = entries.prefix(limit)
        let senders = Array(Set(page.compactMap { $0.fields["userId"].flatMap { UserID(String(buffer: $0)) } }))
        let profiles = Dictionary(try await UserStore(redis: redis).users(senders).map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        let messages = page.compactMap { entry -> Message? in
            guard let id = entry.fields["id"].flatMap({ MessageID(String(buffer: $0)) }),
                let userId = entry.fields["userId"].flatMap({ UserID(String(buffer: $0)) }),
                let text = entry.fields["text"].map({ String(buffer: $0) }),
                let created = entry.fields["createdAt"].flatMap({ Int64(String(buffer: $0)) })
            else { return nil }
            let createdAt = Timestamp(milliseconds: created)
            // An account that is gone still shows as its id.
            let user = profiles[userId] ?? User(id: userId, username: "", createdAt: createdAt)
            return Message(id: id, roomId: room, userId: userId, text: text, createdAt: createdAt, user: user)
        }
        let nextCursor = entries.count > limit ? page.last.map { String(buffer: $0.id) } : nil
        return MessagePage(messages: messages, nextCursor: nextCursor)
    }
}
