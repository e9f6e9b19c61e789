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

    /// The element scripts' shared `KEYS` (the layout in `_shared.lua`): the room's hash,
    /// participants, z-order, stream and channel; with an element, also its hash, its reactions
    /// and the room's profiles.
    ///
    /// Every key an element script reads or writes is declared, derived ones included: on a
    /// cluster, Redis checks declared keys before a script runs and answers `TRYAGAIN` or `ASK`
    /// while their slot migrates, whereas an undeclared key missing there fails the script
    /// halfway, after its first writes.
    public static func elementScriptKeys(room: RoomID, element: ElementID?) -> [String] {
        var keys = [self.room(room), roomParticipants(room), roomZOrder(room), roomStream(room), roomChannel(room)]
        if let element {
            keys += [self.element(element, in: room), elementReactions(element, in: room), roomProfiles(room)]
        }
        return keys
    }
}
