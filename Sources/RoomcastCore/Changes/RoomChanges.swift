public import Logging
public import NIOCore
public import RedisClient

/// The changes clients ask for, each with everything that follows it: one method per kind of
/// change runs the change (a store's call of its Redis function, which appends and publishes the
/// room's event in the same atomic step) and then its side effects: the per-user events of the
/// people it concerns (``UserEvents``) and their notifications, which carry the push.
///
/// The socket events and the REST routes both change rooms through this type alone, so a change
/// has the same effects whichever way it came; a transport handler decodes, calls one method here
/// and answers. A change without side effects of its own (an update, a transform) is called
/// through here all the same, so a new effect has one place to go.
///
/// Once a change's function has committed, the change is answered as applied: its side effects
/// never fail it (``UserEvents/publishCommitted(_:_:)``, ``Notifier``), as a client that retried
/// without a `requestId` would apply it twice.
public struct RoomChanges: Sendable {
    public let rooms: RoomStore
    public let elements: ElementStore
    public let reactions: ReactionStore
    public let messages: MessageStore
    /// Runs the functions of changes that need no store (a change's declaration called directly).
    let redis: any RedisClientProtocol
    let userEvents: UserEvents
    let notifier: Notifier

    /// Changes through these stores, publishing per-user events with `userEvents` and storing
    /// notifications (and their push jobs) in `notifications`. `logger` is the notifier's: what it
    /// logs is about notifications, so a gateway gives it the label `notifications`.
    public init(
        rooms: RoomStore, elements: ElementStore, reactions: ReactionStore, messages: MessageStore, userEvents: UserEvents,
        notifications: NotificationStore, logger: Logger
    ) {
        self.rooms = rooms
        self.elements = elements
        self.reactions = reactions
        self.messages = messages
        self.redis = rooms.redis
        self.userEvents = userEvents
        self.notifier = Notifier(notifications: notifications, logger: logger)
    }

    /// Changes through stores over `redis` with their default limits.
    public init(redis: any RedisClientProtocol, logger: Logger = Logger(label: "notifications")) {
        self.init(
            rooms: RoomStore(redis: redis), elements: ElementStore(redis: redis), reactions: ReactionStore(redis: redis),
            messages: MessageStore(redis: redis), userEvents: UserEvents(redis: redis), notifications: NotificationStore(redis: redis),
            logger: logger
        )
    }

    // MARK: Rooms

    /// ``RoomStore/create(by:with:name:)``; then every participant but the creator gets
    /// `room:created {room}` and a notification.
    public func createRoom(by creator: UserID, with others: [UserID], name: String?) async throws(RoomcastError) -> Room {
        let room = try await rooms.create(by: creator, with: others, name: name)
        await userEvents.publishCommitted(.roomCreated, RoomPayload(room: room), to: room.participants.map(\.id).filter { $0 != creator })
        await notifier.roomCreated(room)
        return room
    }

    /// ``RoomStore/rename(_:to:by:)``; then every participant gets `room:updated {room}`.
    public func renameRoom(_ id: RoomID, to name: String?, by user: UserID) async throws(RoomcastError) -> Room {
        let renamed = try await rooms.commitRename(id, to: name, by: user)
        await userEvents.publishCommitted(.roomUpdated, RoomPayload(room: renamed.room), to: renamed.participants)
        return renamed.room
    }

    /// A socket of `user` opened the room (its unseen counts are 0 now).
    ///
    /// When the counts changed, every socket of the user, the opener included, gets
    /// `room:seen {roomId, unseenCount}` as a per-user event. When the room was open
    /// already on another of the user's sockets (`wasOpen`), the counts were 0 and the user's
    /// other sockets know it: nothing is published, and the frame is returned for the opener
    /// alone.
    /// - Returns: the `room:seen` frame for the opening socket to send itself, or nil when it
    ///   comes as a per-user event.
    public func roomOpened(_ room: RoomID, by user: UserID, wasOpen: Bool) async -> ByteBuffer? {
        let seen = RoomSeen(roomId: room, unseenCount: 0)
        if wasOpen, let frame = try? UserEvents.frame(.roomSeen, seen) {
            return frame
        }
        await userEvents.publishCommitted(.roomSeen, seen, to: [user])
        return nil
    }

    /// ``ElementStore/clear(_:by:)``; then every participant gets `room:cleared:global` with
    /// their counts. Returns how many elements were removed.
    @discardableResult
    public func clearRoom(_ room: RoomID, by user: UserID) async throws(RoomcastError) -> Int {
        let cleared = try await elements.commitClear(room, by: user)
        // The count after a clear is 0.
        await userEvents.publishCommitted(.roomClearedGlobal, cleared.unseen.map { recipient, unseen in
            (recipient, GlobalElementEvent(roomId: room, clearedBy: user, elementCount: 0, unseenCount: unseen))
        })
        return cleared.removed
    }

    // MARK: Messages

    /// ``MessageStore/sendJSON(_:from:to:requestId:)``: the room's `message:new` is all it does.
    public func sendMessageJSON(
        _ text: String, from sender: User, to room: RoomID, requestId: RequestID? = nil
    ) async throws(RoomcastError) -> (message: ByteBuffer, offset: String) {
        try await messages.sendJSON(text, from: sender, to: room, requestId: requestId)
    }

    // MARK: Elements

    /// ``ElementStore/createJSON(_:by:in:requestId:)``; then every participant gets
    /// `element:created:global` with their counts (not for a replayed request).
    public func createElementJSON(_ draft: ElementDraft, by user: User, in room: RoomID, requestId: RequestID? = nil) async throws(RoomcastError) -> ByteBuffer {
        let (id, created) = try await elements.commitCreate(draft, by: user, in: room, requestId: requestId)
        guard !created.isReplay else { return created.element }
        await userEvents.publishCommitted(.elementCreatedGlobal, created.unseen.map { recipient, unseen in
            (recipient, GlobalElementEvent(
                roomId: room, elementId: id, createdBy: user.id, type: draft.type, elementCount: created.elementCount, unseenCount: unseen
            ))
        })
        return created.element
    }

    /// ``createElementJSON(_:by:in:requestId:)``, decoded.
    public func createElement(_ draft: ElementDraft, by user: User, in room: RoomID, requestId: RequestID? = nil) async throws(RoomcastError) -> Element {
        try ElementStore.decodeElement(try await createElementJSON(draft, by: user, in: room, requestId: requestId))
    }

    /// ``ElementStore/apply(_:with:by:in:)``: the room's `element:updated` is all it does.
    public func updateElement(_ id: ElementID, with changes: ElementChanges, by user: UserID, in room: RoomID) async throws(RoomcastError) -> ElementStore.AppliedUpdate {
        try await elements.apply(id, with: changes, by: user, in: room)
    }

    /// ``ElementStore/updateJSON(_:with:by:in:)``: the whole element, for REST.
    public func updateElementJSON(_ id: ElementID, with changes: ElementChanges, by user: UserID, in room: RoomID) async throws(RoomcastError) -> ByteBuffer {
        try await elements.updateJSON(id, with: changes, by: user, in: room)
    }

    /// ``ElementStore/transformJSON(_:with:by:in:)``: the room's `element:transformed` is all it does.
    public func transformElementJSON(_ id: ElementID, with fields: ElementFields, by user: UserID, in room: RoomID) async throws(RoomcastError) -> ByteBuffer {
        try await elements.transformJSON(id, with: fields, by: user, in: room)
    }

    /// ``ElementStore/bringToFront(_:by:in:)``: the room's `element:z-index-changed` is all it does.
    public func bringElementToFront(_ id: ElementID, by user: UserID, in room: RoomID) async throws(RoomcastError) -> Int {
        try await elements.bringToFront(id, by: user, in: room)
    }

    /// ``ElementStore/delete(_:by:in:)``; then every participant gets `element:deleted:global`
    /// with their counts. Returns the room's new element count.
    @discardableResult
    public func deleteElement(_ id: ElementID, by user: UserID, in room: RoomID) async throws(RoomcastError) -> Int {
        let deleted = try await elements.commitDelete(id, by: user, in: room)
        await userEvents.publishCommitted(.elementDeletedGlobal, deleted.unseen.map { recipient, unseen in
            (recipient, GlobalElementEvent(roomId: room, elementId: id, deletedBy: user, elementCount: deleted.elementCount, unseenCount: unseen))
        })
        return deleted.elementCount
    }

    /// ``ReactionStore/toggle(on:by:in:requestId:)``; then a heart given to someone else's
    /// element notifies its creator.
    public func toggleReaction(on element: ElementID, by user: User, in room: RoomID, requestId: RequestID? = nil) async throws(RoomcastError) -> ReactionToggle {
        let toggle = try await reactions.toggle(on: element, by: user, in: room, requestId: requestId)
        await notifier.reactionToggled(toggle, by: user)
        return toggle
    }
}

/// `{roomId, unseenCount}`: the payload of `room:seen`.
private struct RoomSeen: Encodable, Sendable {
    var roomId: RoomID
    var unseenCount: Int
}
