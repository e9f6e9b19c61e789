public import NIOCore
public import RedisClient

/// Elements on a room's canvas and their z-order; every change is one script that checks,
/// changes, appends the event to the room stream and publishes it. A change's other effects (the
/// participants' per-user events) are ``RoomChanges``'s: the gateway changes elements through it.
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
    /// the gateway forwards: elements are encoded in one place, `element_json` in `_elements.lua`.
    public func createJSON(_ draft: ElementDraft, by user: User, in room: RoomID, requestId: RequestID? = nil) async throws(RoomcastError) -> ByteBuffer {
        try await commitCreate(draft, by: user, in: room, requestId: requestId).reply.element
    }

    /// Runs `element_create`: the change and its room event. The participants' per-user events
    /// are ``RoomChanges``'s.
    func commitCreate(
        _ draft: ElementDraft, by user: User, in room: RoomID, requestId: RequestID?
    ) async throws(RoomcastError) -> (id: ElementID, reply: RoomcastFunctions.ElementCreate.Reply) {
        try draft.fields.checkContent(atMost: maxContentLength)
        let creator: String
        do {
            creator = String(buffer: try JSONCoding.encode(user))
        } catch {
            throw RoomcastError(.internalError, "could not encode the creator")
        }
        let id = ElementID.random()
        let now = Timestamp.now()
        let created = try await redis.call(
            RoomcastFunctions.ElementCreate(
                room: room, element: id, user: user.id, now: now, eventsKept: eventsKept, creator: creator, maxElements: maxElements,
                fields: draft.fields.words + ["createdAt", now.description], request: requestId
            )
        )
        return (id, created)
    }

    /// Changes fields; a move also brings the element to front. Emits `element:updated`.
    public func update(_ id: ElementID, with changes: ElementChanges, by user: UserID, in room: RoomID) async throws(RoomcastError) -> Element {
        try Self.decodeElement(try await updateJSON(id, with: changes, by: user, in: room))
    }

    /// ``update(_:with:by:in:)`` returning the element's JSON as the script wrote it.
    public func updateJSON(_ id: ElementID, with changes: ElementChanges, by user: UserID, in room: RoomID) async throws(RoomcastError) -> ByteBuffer {
        let updated = try await runUpdate(id, with: changes, by: user, in: room, answeringElement: true)
        guard let element = updated.element else { throw RoomcastError(.internalError, "element_update answered no element") }
        return element
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
        let updated = try await runUpdate(id, with: changes, by: user, in: room, answeringElement: false)
        return AppliedUpdate(offset: updated.offset, updates: updated.updates)
    }

    private func runUpdate(
        _ id: ElementID, with changes: ElementChanges, by user: UserID, in room: RoomID, answeringElement: Bool
    ) async throws(RoomcastError) -> RoomcastFunctions.ElementUpdate.Reply {
        try changes.fields.checkContent(atMost: maxContentLength)
        return try await redis.call(
            RoomcastFunctions.ElementUpdate(
                room: room, element: id, user: user, now: .now(), eventsKept: eventsKept, toFront: changes.fields.changesPosition,
                answerElement: answeringElement, fields: changes.fields.words
            )
        )
    }

    /// Applies transform fields and brings the element to front. Emits `element:transformed`.
    public func transform(_ id: ElementID, with fields: ElementFields, by user: UserID, in room: RoomID) async throws(RoomcastError) -> Element {
        try Self.decodeElement(try await transformJSON(id, with: fields, by: user, in: room))
    }

    /// ``transform(_:with:by:in:)`` returning the element's JSON as the script wrote it.
    public func transformJSON(_ id: ElementID, with fields: ElementFields, by user: UserID, in room: RoomID) async throws(RoomcastError) -> ByteBuffer {
        try await redis.call(
            RoomcastFunctions.ElementTransform(room: room, element: id, user: user, now: .now(), eventsKept: eventsKept, fields: fields.words)
        ).element
    }

    /// Puts the element on top; no event and no change when it already is. Returns its zIndex.
    public func bringToFront(_ id: ElementID, by user: UserID, in room: RoomID) async throws(RoomcastError) -> Int {
        try await redis.call(RoomcastFunctions.ElementFront(room: room, element: id, user: user, now: .now(), eventsKept: eventsKept)).zIndex
    }

    /// Deletes the element and its reactions. Emits `element:deleted`. Returns the new count.
    @discardableResult
    public func delete(_ id: ElementID, by user: UserID, in room: RoomID) async throws(RoomcastError) -> Int {
        try await commitDelete(id, by: user, in: room).elementCount
    }

    /// Runs `element_delete`; the participants' per-user events are ``RoomChanges``'s.
    func commitDelete(_ id: ElementID, by user: UserID, in room: RoomID) async throws(RoomcastError) -> RoomcastFunctions.ElementDelete.Reply {
        try await redis.call(RoomcastFunctions.ElementDelete(room: room, element: id, user: user, now: .now(), eventsKept: eventsKept))
    }

    /// Removes every element. Emits `room:cleared`. Returns how many were removed.
    @discardableResult
    public func clear(_ room: RoomID, by user: UserID) async throws(RoomcastError) -> Int {
        try await commitClear(room, by: user).removed
    }

    /// Runs `room_clear`; the participants' per-user events are ``RoomChanges``'s.
    func commitClear(_ room: RoomID, by user: UserID) async throws(RoomcastError) -> RoomcastFunctions.RoomClear.Reply {
        try await redis.call(RoomcastFunctions.RoomClear(room: room, user: user, now: .now(), eventsKept: eventsKept))
    }

    /// The room's elements in z-order with the offset they are current at, for a participant.
    public func snapshot(of room: RoomID, for user: UserID) async throws(RoomcastError) -> Snapshot {
        let snapshot = try await redis.call(RoomcastFunctions.ElementsSnapshot(room: room, user: user))
        return Snapshot(offset: snapshot.offset, json: snapshot.elements)
    }

    static func decodeElement(_ json: ByteBuffer) throws(RoomcastError) -> Element {
        guard let element = try? JSONCoding.decode(Element.self, from: json) else {
            throw RoomcastError(.internalError, "unexpected element from Redis")
        }
        return element
    }
}
