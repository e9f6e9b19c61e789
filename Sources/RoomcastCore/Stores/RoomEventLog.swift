public import NIOCore
public import RedisClient

/// A room's event stream read back: what a client that reconnects missed since the last offset
/// it saw, rebuilt byte for byte as it was published.
public struct RoomEventLog: Sendable {
    private let redis: any RedisClientProtocol
    /// The most events replayed to one client; further back, a snapshot is cheaper.
    public var maximumReplay: Int

    /// Creates a log reader over a client.
    public init(redis: any RedisClientProtocol, maximumReplay: Int = 1_000) {
        self.redis = redis
        self.maximumReplay = maximumReplay
    }

    /// The frames of `room` after offset `since`, as `user` received them, in order.
    public struct Replay: Sendable {
        /// Each missed event's frame, oldest first.
        public var frames: [ByteBuffer]
        /// The offset of the last of them (`since` when there were none).
        public var offset: String
    }

    /// The events of `room` after `since` for `user`; `nil` when they cannot all be replayed
    /// (malformed or unknown offset, trimmed events, more than ``maximumReplay``).
    /// - Throws: `not_found`, `forbidden` for a non-participant.
    public func replay(_ room: RoomID, after since: String, for user: UserID) async throws(RoomcastError) -> Replay? {
        // Anything but an offset is "too old", never an error: checked here and in the script.
        guard StreamOffset(since) != nil else { return nil }
        let replay = try await redis.call(RoomcastFunctions.RoomReplay(room: room, user: user, since: since, most: maximumReplay))
        guard let (offset, entries) = replay.events else { return nil }
        var frames: [ByteBuffer] = []
        frames.reserveCapacity(entries.count)
        for entry in entries {
            guard let envelope = Self.envelope(of: entry) else {
                throw RoomcastError(.internalError, "unexpected entry in the room stream")
            }
            frames.append(envelope.frame(for: user.rawValue))
        }
        return Replay(frames: frames, offset: offset)
    }

    /// Every event of `room` after `offset`, oldest first, as the envelopes they were published
    /// in (a node fills a gap in its pub/sub feed with them); `nil` when the stream no longer holds
    /// them all (trimmed) or there are more than ``maximumReplay``.
    public func events(of room: RoomID, after offset: StreamOffset) async throws(RoomcastError) -> [EventEnvelope]? {
        try await StreamBackfill.entries(of: RedisKeys.roomStream(room), after: offset, limit: maximumReplay, redis: redis)?
            .compactMap(Self.envelope(of:))
    }

    /// The last `count` events of `room` still in its stream, newest first (for operators).
    public func latest(_ count: Int, of room: RoomID) async throws(RoomcastError) -> [EventEnvelope] {
        let reply = try await mappingRedisErrors { () throws(RedisError) in
            try await redis.send(RedisCommand("XREVRANGE", RedisKeys.roomStream(room), "+", "-", "COUNT", count))
        }
        guard case .array(let entries) = reply else { return [] }
        return entries.compactMap(Self.envelope(of:))
    }

    /// Rebuilds an entry as it was published (see `_emit.lua`): frame `p` + offset + `s`, or for
    /// an event that differs per recipient, `pa` for the users listed in `u` and `pb` for the others.
    static func envelope(of reply: RedisReply) -> EventEnvelope? {
        guard let entry = RedisStreamEntry(reply), let suffix = entry.fields["s"] else { return nil }
        let (id, fields) = (entry.id, entry.fields)
        func frame(_ prefix: ByteBuffer) -> ByteBuffer {
            var frame = prefix
            frame.writeImmutableBuffer(id)
            frame.writeImmutableBuffer(suffix)
            return frame
        }
        let offset = Substring(String(buffer: id))
        if let prefix = fields["p"] {
            return EventEnvelope(offset: offset, frame: frame(prefix))
        }
        guard let listed = fields["pa"], let others = fields["pb"], let users = fields["u"] else { return nil }
        let listedUsers = Set(String(buffer: users).split(separator: ","))
        return EventEnvelope(offset: offset, frame: frame(others), listedFrame: frame(listed), listedUsers: listedUsers)
    }
}
