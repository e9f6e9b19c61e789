/// A function about one room: all its keys carry the room's hash tag, so it runs in one slot.
protocol RoomFunction: RoomcastFunction {
    var room: RoomID { get }
}

/// A function about one element of a room.
protocol ElementFunction: RoomFunction {
    var element: ElementID { get }
}

/// A function a user's request runs (its `user` argument).
protocol UserRequested {
    var user: UserID { get }
}

/// A function that records the time of its change (its `now` argument, epoch ms).
protocol Stamped {
    var now: Timestamp { get }
}

/// A function that appends room events (its `events_kept` argument: the stream's length).
protocol EmittingRoomEvents {
    var eventsKept: Int { get }
}

/// A function that emits one user's events (`_emit.lua`): its `route` and `user_id` arguments,
/// beside the user's `stream` and `sockets` keys.
protocol EmittingUserEvents {
    var user: UserID { get }
    var routing: NodeEventRouting { get }
}

/// A room's keys as the Lua functions name them (`_elements.lua`, `_presence.lua`).
extension FunctionKey where Function: RoomFunction {
    static var room: Self { Self("room") { RedisKeys.room($0.room) } }
    static var participants: Self { Self("participants") { RedisKeys.roomParticipants($0.room) } }
    static var zOrder: Self { Self("z_order") { RedisKeys.roomZOrder($0.room) } }
    static var stream: Self { Self("stream") { RedisKeys.roomStream($0.room) } }
    /// The room's channel, which is never a key: declared so that Redis Cluster refuses the
    /// function up front (`TRYAGAIN`) while the room's slot migrates (`_elements.lua`).
    static var channel: Self { Self("channel") { RedisKeys.roomChannel($0.room) } }
    static var profiles: Self { Self("profiles") { RedisKeys.roomProfiles($0.room) } }
    static var presence: Self { Self("presence") { RedisKeys.roomPresence($0.room) } }
    static var unseen: Self { Self("unseen") { RedisKeys.roomUnseenElements($0.room) } }
    static var reads: Self { Self("reads") { RedisKeys.roomMessageReads($0.room) } }
}

extension FunctionKey where Function: ElementFunction {
    static var element: Self { Self("element") { RedisKeys.element($0.element, in: $0.room) } }
    static var reactions: Self { Self("reactions") { RedisKeys.elementReactions($0.element, in: $0.room) } }
}

extension FunctionArgument where Function: RoomFunction {
    static var roomId: Self { Self("room_id") { $0.room.rawValue } }
}

extension FunctionArgument where Function: ElementFunction {
    static var elementId: Self { Self("element_id") { $0.element.rawValue } }
}

extension FunctionArgument where Function: UserRequested {
    static var user: Self { Self("user") { $0.user.rawValue } }
}

extension FunctionArgument where Function: EmittingUserEvents {
    /// The name of the user's nodes' event channels up to the node id (their slot is the user's).
    static var route: Self { Self("route") { RedisKeys.nodeEventsRoute(forUser: $0.user, routing: $0.routing) } }
    static var userId: Self { Self("user_id") { $0.user.rawValue } }
}

extension FunctionArgument where Function: Stamped {
    static var now: Self { .time("now") { $0.now } }
}

extension FunctionArgument where Function: EmittingRoomEvents {
    static var eventsKept: Self { Self("events_kept") { $0.eventsKept } }
}
