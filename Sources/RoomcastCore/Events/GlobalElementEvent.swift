/// The payload of `element:created:global`, `element:deleted:global` and `room:cleared:global`:
/// what changed in a room, with the counts **for the recipient** as absolute values, so a client
/// that missed or repeated an event still shows the truth.
struct GlobalElementEvent: Encodable, Sendable {
    var roomId: RoomID
    var elementId: ElementID?
    var createdBy: UserID?
    var type: String?
    var deletedBy: UserID?
    var clearedBy: UserID?
    var elementCount: Int
    var unseenCount: Int

    init(roomId: RoomID, elementId: ElementID, createdBy: UserID, type: String, elementCount: Int, unseenCount: Int) {
        self.roomId = roomId
        self.elementId = elementId
        self.createdBy = createdBy
        self.type = type
        self.elementCount = elementCount
        self.unseenCount = unseenCount
    }

    init(roomId: RoomID, elementId: ElementID, deletedBy: UserID, elementCount: Int, unseenCount: Int) {
        self.roomId = roomId
        self.elementId = elementId
        self.deletedBy = deletedBy
        self.elementCount = elementCount
        self.unseenCount = unseenCount
    }

    init(roomId: RoomID, clearedBy: UserID, elementCount: Int, unseenCount: Int) {
        self.roomId = roomId
        self.clearedBy = clearedBy
        self.elementCount = elementCount
        self.unseenCount = unseenCount
    }
}
