extension RedisKeys {
    /// Sorted set: the room's element ids scored by `zIndex` (the stack, bottom first).
    public static func roomZOrder(_ id: RoomID) -> String { "room:{\(id)}:z" }
    /// The prefix of a room's element hashes; element scripts append the element id.
    public static func elementPrefix(_ room: RoomID) -> String { "room:{\(room)}:element:" }
    /// Hash: one element's fields (numbers as decimal text, `creator` as JSON).
    public static func element(_ id: ElementID, in room: RoomID) -> String { elementPrefix(room) + id.rawValue }
    /// The element's reactions (kept with the element; removed with it).
    public static func elementReactions(_ id: ElementID, in room: RoomID) -> String { element(id, in: room) + reactionsSuffix }
    /// What `elementReactions` appends to an element's key.
    public static let reactionsSuffix = ":reactions"
}
