public import NIOCore
public import RedisClient

/// A room's event stream read back, each event rebuilt byte for byte as it was published: what a
/// node's pub/sub feed missed, and the latest events for operators. (A rejoining client's missed
/// events are read in the same step as its join: ``PresenceStore/join(_:user:socket:catchingUp:)``.)
public struct RoomEventLog: Sendable {
    private let redis: any RedisClientProtocol
    /// The most events replayed to one client; further back, a snapshot is cheaper.
    public var maximumReplay: Int

    /// Creates a log reader over a client.
    public init(redis: any RedisClientProtocol, maximumReplay: Int = 1_000) {
        self.redis = redis
        self.maximumReplay = maximumReplay
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
