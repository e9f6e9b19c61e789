import NIOCore
public import RedisClient

/// Hearts on elements: one per user per element, toggled atomically.
public struct ReactionStore: Sendable {
    private let redis: any RedisClientProtocol
    private let rooms: RoomStore
    /// Room events kept per stream (approximate).
    public var eventsKept: Int

    /// Creates a store over a client.
    public init(redis: any RedisClientProtocol, eventsKept: Int = 1_000) {
        self.redis = redis
        self.rooms = RoomStore(redis: redis)
        self.eventsKept = eventsKept
    }

    /// Adds `user`'s heart, or removes it when it is there; the room gets
    /// `element:reaction:added` or `element:reaction:removed`, `stats.hasReacted` set per recipient.
    /// - Parameter requestId: a client's id for this toggle: a retry with the same id returns the
    ///   first answer and toggles nothing (and its ``ReactionToggle/subject`` is `nil`: nobody is
    ///   notified twice).
    public func toggle(on element: ElementID, by user: User, in room: RoomID, requestId: RequestID? = nil) async throws(RoomcastError) -> ReactionToggle {
        // The script adds `createdAt`: it orders reactors, so it must follow the order of toggles.
        let draft = ReactionDraft(id: MessageID.random().rawValue, elementId: element, userId: user.id, type: "heart", user: user)
        let json: String
        do {
            json = String(buffer: try JSONCoding.encode(draft))
        } catch {
            throw RoomcastError(.internalError, "could not encode the reaction")
        }
        let toggled = try await redis.call(
            RoomcastFunctions.ReactionToggle(
                room: room, element: element, user: user.id, now: .now(), eventsKept: eventsKept, reactionDraft: json, request: requestId
            )
        )
        guard let stored = try? JSONCoding.decode(Reaction.self, from: toggled.reaction),
            let top = try? JSONCoding.decode([User].self, from: toggled.topReactors)
        else {
            throw RoomcastError(.internalError, "unexpected reaction from reaction_toggle")
        }
        var subject: ReactionSubject?
        if !toggled.isReplay, let creator = UserID(toggled.creator) {
            subject = ReactionSubject(
                roomId: room, roomName: toggled.roomName.isEmpty ? nil : toggled.roomName, elementId: element,
                elementType: toggled.elementType, elementCreator: creator
            )
        }
        return ReactionToggle(
            action: toggled.action, reaction: stored,
            elementStats: ReactionStats(totalReactions: toggled.count, hasReacted: toggled.action == "added", topReactors: top),
            subject: subject
        )
    }

    /// Every reaction of an element, newest first, for a participant.
    public func reactions(on element: ElementID, in room: RoomID, for user: UserID) async throws(RoomcastError) -> ReactionList {
        switch try await rooms.membership(of: user, in: room) {
        case .noSuchRoom: throw RoomcastError(.notFound, "room not found")
        case .notParticipant: throw RoomcastError(.forbidden, "not a participant of this room")
        case .participant: break
        }
        let replies = try await mappingRedisErrors { () throws(RedisError) in
            try await redis.pipeline([
                RedisCommand("EXISTS", RedisKeys.element(element, in: room)),
                RedisCommand("HVALS", RedisKeys.elementReactions(element, in: room)),
            ])
        }
        guard replies[0] == .integer(1) else { throw RoomcastError(.notFound, "element not found") }
        let values = (try? [ByteBuffer](redisReply: replies[1])) ?? []
        let reactions = values.compactMap { try? JSONCoding.decode(Reaction.self, from: $0) }.sorted { $0.createdAt > $1.createdAt }
        return ReactionList(reactions: reactions, total: reactions.count, hasReacted: reactions.contains { $0.userId == user })
    }
}

/// A new reaction without its `createdAt`, which `reaction_toggle.lua` sets.
private struct ReactionDraft: Encodable {
    var id: String
    var elementId: ElementID
    var userId: UserID
    var type: String
    var user: User
}
