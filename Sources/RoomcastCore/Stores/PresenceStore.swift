public import NIOCore
public import RedisClient

/// Who has a room open: one member per socket, `<userId>|<socketId>`, where a socket id starts
/// with the id of the node holding it.
///
/// A member lives as long as its node: when the node's lease in the registry lapses, a reaper
/// (``NodeReaper``) removes its members with ``reap(_:node:)``. Each member also carries its own
/// expiry, a long backstop refreshed by its node, for members an index lost.
public struct PresenceStore: Sendable {
    private let redis: any RedisClientProtocol
    /// How long a member stays present without a refresh (the backstop; a dead node's members
    /// go sooner, reaped).
    public var lifetime: Duration
    /// Room events kept per stream (presence changes are room events).
    public var eventsKept: Int

    /// Creates a store over a client.
    public init(redis: any RedisClientProtocol, lifetime: Duration = .seconds(30), eventsKept: Int = 1_000) {
        self.redis = redis
        self.lifetime = lifetime
        self.eventsKept = eventsKept
    }

    /// The member naming one socket of a user.
    public static func member(user: UserID, socket: String) -> String { "\(user)|\(socket)" }

    /// Who is present after a join, and what the joiner caught up with.
    public struct Joined: Sendable {
        /// True when the join changed who is present, so the room got a `room:presence` event.
        public var announced: Bool
        /// The present users' ids as a JSON array.
        public var activeUserIds: String
        /// The room stream's last offset.
        public var offset: String
        /// When the join announced nothing: the `room:presence` frame (at ``offset``) that tells
        /// the joiner alone who is there, written by the script like every event frame.
        public var joinerFrame: ByteBuffer?
        /// The room was open already on another socket of the user, so the join changed none of
        /// the user's unseen counts (they were 0).
        public var wasOpen: Bool
        /// What the joiner caught up with; nil when it asked for nothing.
        public var caughtUp: CaughtUp?
    }

    /// What a joining socket asks to catch up with, read in the same step as its join.
    public enum CatchUp: Sendable {
        /// Nothing.
        case none
        /// The room's elements.
        case snapshot
        /// The events after offset `since` (the last one the client saw), when the room still
        /// has them all and they are at most `most`; else the room's elements.
        case events(after: String, most: Int)

        var argument: String {
            switch self {
            case .none: ""
            case .snapshot: "snapshot"
            case .events(let since, _): since
            }
        }

        var most: Int {
            if case .events(_, let most) = self { return most }
            return 0
        }
    }

    /// What a joining socket caught up with: everything before the offset it names, so that of
    /// the room's live events it needs only those after it.
    public enum CaughtUp: Sendable {
        /// The events it missed, each frame as its user received it, oldest first; `offset` is the
        /// last one's (the client's own offset when it missed none).
        case replay(offset: String, frames: [ByteBuffer])
        /// The room's elements as a JSON array, zIndex ascending, current at `offset`.
        case snapshot(offset: String, elements: ByteBuffer)

        /// The offset the joiner is current at.
        public var offset: String {
            switch self {
            case .replay(let offset, _), .snapshot(let offset, _): offset
            }
        }
    }

    /// Marks the socket present in the room and resets the user's unseen counts there, after
    /// reading what it asks to catch up with: one step, one round trip.
    /// - Throws: `not_found`, `forbidden` for a non-participant.
    @discardableResult
    public func join(_ room: RoomID, user: UserID, socket: String, catchingUp catchUp: CatchUp = .none) async throws(RoomcastError) -> Joined {
        let now = Timestamp.now()
        let joined = try await redis.call(
            RoomcastFunctions.PresenceJoin(
                room: room, user: user, member: Self.member(user: user, socket: socket), now: now, expiry: expiry(from: now), eventsKept: eventsKept,
                catchUp: catchUp
            )
        )
        let caughtUp: CaughtUp?
        switch joined.caughtUp {
        case .none:
            caughtUp = nil
        case .snapshot(let offset, let elements):
            caughtUp = .snapshot(offset: offset, elements: elements)
        case .replay(let offset, let entries):
            var frames: [ByteBuffer] = []
            frames.reserveCapacity(entries.count)
            for entry in entries {
                guard let envelope = RoomEventLog.envelope(of: entry) else {
                    throw RoomcastError(.internalError, "unexpected entry in the room stream")
                }
                frames.append(envelope.frame(for: user.rawValue))
            }
            caughtUp = .replay(offset: offset, frames: frames)
        }
        return Joined(
            announced: joined.announced, activeUserIds: joined.activeUserIds, offset: joined.offset, joinerFrame: joined.joinerFrame,
            wasOpen: joined.wasOpen, caughtUp: caughtUp
        )
    }

    /// Marks the socket gone from the room.
    public func leave(_ room: RoomID, user: UserID, socket: String) async throws(RoomcastError) {
        _ = try await redis.call(RoomcastFunctions.PresenceLeave(room: room, member: Self.member(user: user, socket: socket), now: .now(), eventsKept: eventsKept))
    }

    /// Keeps these members present for another lifetime, and announces expired ones.
    /// - Parameter restoring: add back the members that are gone, too. Only for members whose
    ///   sockets the caller still holds: one gone because its socket left must stay gone.
    /// - Returns: the members that were gone (none is added back unless `restoring`).
    @discardableResult
    public func refresh(_ room: RoomID, members: [String], restoring: Bool = false) async throws(RoomcastError) -> [String] {
        let now = Timestamp.now()
        return try await redis.call(
            RoomcastFunctions.PresenceRefresh(
                room: room, members: members, restoring: restoring, now: now, expiry: expiry(from: now), eventsKept: eventsKept
            )
        ).gone
    }

    /// Removes every member of node `node`'s sockets (a dead node) and announces who is left.
    /// - Returns: the number of members removed.
    @discardableResult
    public func reap(_ room: RoomID, node: NodeID) async throws(RoomcastError) -> Int {
        try await redis.call(RoomcastFunctions.PresenceReap(room: room, node: node, now: .now(), eventsKept: eventsKept)).removed
    }

    /// The users present in a room now.
    public func presentUsers(in room: RoomID) async throws(RoomcastError) -> [UserID] {
        let now = Int(Timestamp.now().milliseconds)
        let members = try await mappingRedisErrors { () throws(RedisError) in
            try await redis.send(RedisCommand("ZRANGE", RedisKeys.roomPresence(room), now, "+inf", "BYSCORE"), as: [String].self)
        }
        return Array(Set(members.compactMap { $0.split(separator: "|").first.flatMap { UserID(String($0)) } })).sorted()
    }

    /// A member's backstop expiry for a write at `now`.
    private func expiry(from now: Timestamp) -> Timestamp {
        Timestamp(milliseconds: now.milliseconds + Int64(lifetime.wholeMilliseconds))
    }
}
