public import NIOCore
public import RedisClient

/// Elements on a room's canvas and their z-order; every change is one script that checks,
/// changes, appends the event to the room stream and publishes it.
public struct ElementStore: Sendable {
    private let redis: any RedisClientProtocol
    /// Room events kept in each stream (approximate).
    public var eventsKept: Int
    /// Most elements one room may hold.
    public var maxElements: Int
    /// Longest `content` of an element, in characters.
    public var maxContentLength: Int

    /// Creates a store over a client.
    public init(redis: any RedisClientProtocol, eventsKept: Int = 1_000, maxElements: Int = 5_000, maxContentLength: Int = 20_000) {
        self.redis = redis
        self.eventsKept = eventsKept
        self.maxElements = maxElements
        self.maxContentLength = maxContentLength
    }

    /// A room's elements in z-order, and the stream offset they are current at.
    public struct Snapshot: Sendable {
        /// Apply events after this offset on top of `elements`.
        public var offset: String
        /// The elements as a JSON array, zIndex ascending (forwarded as is in `elements:batch`).
        public var json: ByteBuffer
        /// The same elements, decoded.
        public var elements: [Element] { (try? JSONCoding.decode([Element].self, from: json)) ?? [] }
    }

    /// Adds an element on top of the stack; every socket in the room gets `element:created`.
    /// - Parameter requestId: a client's id for this create: a retry with the same id returns the
    ///   element created the first time and creates nothing.
    public func create(_ draft: ElementDraft, by user: User, in room: RoomID, requestId: RequestID? = nil) async throws(RoomcastError) -> Element {
        try Self.decodeElement(try await createJSON(draft, by: user, in: room, requestId: requestId))
    }

    /// ``create(_:by:in:requestId:)`` returning the element's JSON as the script wrote it, which
    /// the gateway forwards: elements are encoded in one place, `element_json` in `_shared.lua`.
    public func createJSON(_ draft: ElementDraft, by user: User, in room: RoomID, requestId: RequestID? = nil) async throws(RoomcastError) -> ByteBuffer {
        try draft.fields.checkContent(atMost: maxContentLength)
        let creator: String
        do {
            creator = String(buffer: try JSONCoding.encode(user))
        } catch {
            throw RoomcastError(.internalError, "could not encode the creator")
        }
        let id = ElementID.random()
        var fields = draft.fields.values.flatMap { [$0.name, $0.value] as [any RedisArgument] }
        fields += ["createdAt", Timestamp.now().description]
        let outcome = try MutationReply(
            try await run(
                RoomcastScripts.elementCreate, room: room, element: id,
                [user.id.rawValue, id.rawValue, room.rawValue, Self.now(), eventsKept, creator, maxElements] + fields,
                extraKeys: [RedisKeys.roomPresence(room), RedisKeys.roomUnseenElements(room)]
                    + (requestId.map { [RedisKeys.roomRequest(room, user: user.id, operation: .elementCreate, request: $0)] } ?? [])
            )
        )
        let element = try Self.elementJSON(outcome.reply, at: 1)
        guard !outcome.isReplay else { return element }
        let counts = try Self.counts(outcome.reply, from: 2)
        // Committed: the ack says so whatever becomes of the participants' events (#29 item 5).
        await UserEvents(redis: redis).publishCommitted(.elementCreatedGlobal, counts.map { recipient, unseen in
            (recipient, GlobalElementEvent(roomId: room, elementId: id, createdBy: user.id, type: draft.type, elementCount: counts.elementCount, unseenCount: unseen))
        })
        return element
    }

    /// Changes fields; a move also brings the element to front. Emits `element:updated`.
    public func update(_ id: ElementID, with changes: ElementChanges, by user: UserID, in room: RoomID) async throws(RoomcastError) -> Element {
        try Self.decodeElement(try await updateJSON(id, with: changes, by: user, in: room))
    }

    /// ``update(_:with:by:in:)`` returning the element's JSON as the script wrote it.
    public func updateJSON(_ id: ElementID, with changes: ElementChanges, by user: UserID, in room: RoomID) async throws(RoomcastError) -> ByteBuffer {
        let reply = try await runUpdate(id, with: changes, by: user, in: room, answeringElement: true)
        return try Self.elementJSON(reply, at: 2)
    }

    /// What an update changed, as the room's `element:updated` tells it.
    public struct AppliedUpdate: Sendable {
        /// The room stream's offset of the `element:updated` event.
        public var offset: String
        /// The `updates` object: the fields as stored, and `zIndex` when the move brought the
        /// element to front.
        public var updates: ByteBuffer
    }

    /// ``update(_:with:by:in:)`` answering only what changed: a drag sends many moves, and
    /// re-reading and encoding the whole element for each would cost Redis more than the change.
    public func apply(_ id: ElementID, with changes: ElementChanges, by user: UserID, in room: RoomID) async throws(RoomcastError) -> AppliedUpdate {
        let reply = try await runUpdate(id, with: changes, by: user, in: room, answeringElement: false)
        guard case .array(let parts) = reply, parts.count == 2, let offset = parts[0].string, case .bulk(let updates) = parts[1] else {
            throw RoomcastError(.internalError, "unexpected reply from element_update")
        }
        return AppliedUpdate(offset: offset, updates: updates)
    }

    private func runUpdate(
        _ id: ElementID, with changes: ElementChanges, by user: UserID, in room: RoomID, answeringElement: Bool
    ) async throws(RoomcastError) -> RedisReply {
        try changes.fields.checkContent(atMost: maxContentLength)
        let fields = changes.fields.values.flatMap { [$0.name, $0.value] as [any RedisArgument] }
        return try await run(
            RoomcastScripts.elementUpdate, room: room, element: id,
            [user.rawValue, id.rawValue, room.rawValue, Self.now(), eventsKept, changes.fields.changesPosition ? "1" : "0", answeringElement ? "1" : "0"]
                + fields
        )
    }

    /// Applies transform fields and brings the element to front. Emits `element:transformed`.
    public func transform(_ id: ElementID, with fields: ElementFields, by user: UserID, in room: RoomID) async throws(RoomcastError) -> Element {
        try Self.decodeElement(try await transformJSON(id, with: fields, by: user, in: room))
    }

    /// ``transform(_:with:by:in:)`` returning the element's JSON as the script wrote it.
    public func transformJSON(_ id: ElementID, with fields: ElementFields, by user: UserID, in room: RoomID) async throws(RoomcastError) -> ByteBuffer {
        let values = fields.values.flatMap { [$0.name, $0.value] as [any RedisArgument] }
        let reply = try await run(
            RoomcastScripts.elementTransform, room: room, element: id,
            [user.rawValue, id.rawValue, room.rawValue, Self.now(), eventsKept] + values
        )
        return try Self.elementJSON(reply, at: 1)
    }

    /// Puts the element on top; no event and no change when it already is. Returns its zIndex.
    public func bringToFront(_ id: ElementID, by user: UserID, in room: RoomID) async throws(RoomcastError) -> Int {
        let reply = try await run(
            RoomcastScripts.elementFront, room: room, element: id,
            [user.rawValue, id.rawValue, room.rawValue, Self.now(), eventsKept]
        )
        guard case .array(let parts) = reply, parts.count == 2, let z = try? Int(redisReply: parts[1]) else {
            throw RoomcastError(.internalError, "unexpected reply from element_front")
        }
        return z
    }

    /// Deletes the element and its reactions. Emits `element:deleted`. Returns the new count.
    @discardableResult
    public func delete(_ id: ElementID, by user: UserID, in room: RoomID) async throws(RoomcastError) -> Int {
        let reply = try await run(
            RoomcastScripts.elementDelete, room: room, element: id,
            [user.rawValue, id.rawValue, room.rawValue, Self.now(), eventsKept],
            extraKeys: [RedisKeys.roomPresence(room), RedisKeys.roomUnseenElements(room)]
        )
        let counts = try Self.counts(reply, from: 1)
        await UserEvents(redis: redis).publishCommitted(.elementDeletedGlobal, counts.map { recipient, unseen in
            (recipient, GlobalElementEvent(roomId: room, elementId: id, deletedBy: user, elementCount: counts.elementCount, unseenCount: unseen))
        })
        return counts.elementCount
    }

    /// Removes every element. Emits `room:cleared`. Returns how many were removed.
    @discardableResult
    public func clear(_ room: RoomID, by user: UserID) async throws(RoomcastError) -> Int {
        let reply = try await run(
            RoomcastScripts.roomClear, room: room, element: nil,
            [user.rawValue, RedisKeys.elementPrefix(room), room.rawValue, Self.now(), eventsKept, RedisKeys.reactionsSuffix],
            extraKeys: [RedisKeys.roomPresence(room), RedisKeys.roomUnseenElements(room)]
        )
        // The second value is how many elements went; the count after a clear is 0.
        let counts = try Self.counts(reply, from: 1)
        await UserEvents(redis: redis).publishCommitted(.roomClearedGlobal, counts.map { recipient, unseen in
            (recipient, GlobalElementEvent(roomId: room, clearedBy: user, elementCount: 0, unseenCount: unseen))
        })
        return counts.elementCount
    }

    /// The room's elements in z-order with the offset they are current at, for a participant.
    public func snapshot(of room: RoomID, for user: UserID) async throws(RoomcastError) -> Snapshot {
        let reply = try await run(
            RoomcastScripts.elementsSnapshot, room: room, element: nil, [user.rawValue, RedisKeys.elementPrefix(room)], durability: .master
        )
        guard case .array(let parts) = reply, parts.count == 2, let offset = parts[0].string, case .bulk(let json) = parts[1] else {
            throw RoomcastError(.internalError, "unexpected reply from elements_snapshot")
        }
        return Snapshot(offset: offset, json: json)
    }

    // MARK: Helpers

    /// Runs one of the element scripts; a change's reply waits for the durability the client's
    /// configuration asks (`nil`), a read's is the master's.
    private func run(
        _ script: RedisScript, room: RoomID, element: ElementID?, _ arguments: [any RedisArgument], extraKeys: [String] = [],
        durability: RedisWriteDurability? = nil
    ) async throws(RoomcastError) -> RedisReply {
        let keys = RedisKeys.elementScriptKeys(room: room, element: element) + extraKeys
        return try await mappingRedisErrors { () throws(RedisError) in
            try await redis.evaluate(script, keys: keys, arguments: arguments, durability: durability ?? redis.configuration.writeDurability)
        }
    }

    private static func now() -> Int { Int(Timestamp.now().milliseconds) }

    /// The tail of a script's reply: a count, then `user, unseen count` pairs.
    struct ParticipantCounts: Sequence {
        var elementCount: Int
        var unseen: [(UserID, Int)]
        func makeIterator() -> IndexingIterator<[(UserID, Int)]> { unseen.makeIterator() }
    }

    private static func counts(_ reply: RedisReply, from index: Int) throws(RoomcastError) -> ParticipantCounts {
        guard case .array(let parts) = reply, parts.count > index, let count = try? Int(redisReply: parts[index]) else {
            throw RoomcastError(.internalError, "unexpected counts from Redis")
        }
        var unseen: [(UserID, Int)] = []
        var position = index + 1
        while position + 1 < parts.count {
            if let user = parts[position].string.flatMap(UserID.init), let value = try? Int(redisReply: parts[position + 1]) {
                unseen.append((user, value))
            }
            position += 2
        }
        return ParticipantCounts(elementCount: count, unseen: unseen)
    }

    private static func elementJSON(_ reply: RedisReply, at index: Int) throws(RoomcastError) -> ByteBuffer {
        guard case .array(let parts) = reply, parts.count > index, case .bulk(let json) = parts[index] else {
            throw RoomcastError(.internalError, "unexpected element from Redis")
        }
        return json
    }

    private static func decodeElement(_ json: ByteBuffer) throws(RoomcastError) -> Element {
        guard let element = try? JSONCoding.decode(Element.self, from: json) else {
            throw RoomcastError(.internalError, "unexpected element from Redis")
        }
        return element
    }
}
