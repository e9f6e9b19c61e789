import NIOCore
import RedisClient

extension RoomcastFunctions {
    /// `element_create.lua`: a new element on top of the stack, `element:created`, unseen counts.
    struct ElementCreate: ElementFunction, UserRequested, Stamped, EmittingRoomEvents {
        static let name = "element_create"
        static let isCommittedChange = true
        static let keys: [FunctionKey<Self>] = [
            .room, .participants, .zOrder, .stream, .channel, .element, .reactions, .profiles, .presence, .unseen,
            .optional("request") { f in f.request.map { RedisKeys.roomRequest(f.room, user: f.user, operation: .elementCreate, request: $0) } },
        ]
        static let arguments: [FunctionArgument<Self>] = [
            .user, .elementId, .roomId, .now, .eventsKept,
            .init("creator") { $0.creator }, .init("max_elements") { $0.maxElements }, .rest("fields") { $0.fields },
        ]

        var room: RoomID
        var element: ElementID
        var user: UserID
        var now: Timestamp
        var eventsKept: Int
        /// The creator's public profile as JSON.
        var creator: String
        var maxElements: Int
        /// Field, value, field, value …
        var fields: [String]
        var request: RequestID?

        struct Reply: FunctionReply {
            enum Field: String, ReplyField {
                case offset, element, elementCount, unseen, replayed
                var isOptional: Bool { self == .unseen || self == .replayed }
            }
            /// The element as client JSON.
            var element: ByteBuffer
            var elementCount: Int
            /// Every participant's unseen count; empty for a replay.
            var unseen: UnseenCounts
            /// The request was made before: this is its recorded reply, and nothing changed.
            var isReplay: Bool

            init(_ reply: NamedReply<Field>) throws(RedisError) {
                element = try reply.bytes(.element)
                elementCount = try reply.int(.elementCount)
                unseen = try reply.decodeIfPresent(.unseen) ?? UnseenCounts()
                isReplay = reply.has(.replayed)
            }
        }
    }

    /// `element_update.lua`: changed fields, `element:updated`, to front on a move.
    struct ElementUpdate: ElementFunction, UserRequested, Stamped, EmittingRoomEvents {
        static let name = "element_update"
        static let isCommittedChange = true
        static let keys: [FunctionKey<Self>] = [.room, .participants, .zOrder, .stream, .channel, .element, .reactions, .profiles]
        static let arguments: [FunctionArgument<Self>] = [
            .user, .elementId, .roomId, .now, .eventsKept,
            .flag("to_front") { $0.toFront }, .flag("answer_element") { $0.answerElement }, .rest("fields") { $0.fields },
        ]

        var room: RoomID
        var element: ElementID
        var user: UserID
        var now: Timestamp
        var eventsKept: Int
        var toFront: Bool
        /// Answer the whole element too, not only what changed.
        var answerElement: Bool
        var fields: [String]

        struct Reply: FunctionReply {
            enum Field: String, ReplyField {
                case offset, updates, element
                var isOptional: Bool { self == .element }
            }
            var offset: String
            /// The `updates` object of `element:updated`.
            var updates: ByteBuffer
            /// The element as client JSON, when asked for.
            var element: ByteBuffer?

            init(_ reply: NamedReply<Field>) throws(RedisError) {
                offset = try reply.string(.offset)
                updates = try reply.bytes(.updates)
                element = try reply.decodeIfPresent(.element)
            }
        }
    }

    /// `element_transform.lua`: a transform, to front, `element:transformed` per recipient.
    struct ElementTransform: ElementFunction, UserRequested, Stamped, EmittingRoomEvents {
        static let name = "element_transform"
        static let isCommittedChange = true
        static let keys: [FunctionKey<Self>] = [.room, .participants, .zOrder, .stream, .channel, .element, .reactions, .profiles]
        static let arguments: [FunctionArgument<Self>] = [
            .user, .elementId, .roomId, .now, .eventsKept,
            .rest("fields") { $0.fields },
        ]

        var room: RoomID
        var element: ElementID
        var user: UserID
        var now: Timestamp
        var eventsKept: Int
        var fields: [String]

        struct Reply: FunctionReply {
            enum Field: String, ReplyField { case offset, element }
            /// The element as client JSON.
            var element: ByteBuffer

            init(_ reply: NamedReply<Field>) throws(RedisError) {
                element = try reply.bytes(.element)
            }
        }
    }

    /// `element_front.lua`: the element on top, `element:z-index-changed` when it moved.
    struct ElementFront: ElementFunction, UserRequested, Stamped, EmittingRoomEvents {
        static let name = "element_front"
        static let isCommittedChange = true
        static let keys: [FunctionKey<Self>] = [.room, .participants, .zOrder, .stream, .channel, .element, .reactions, .profiles]
        static let arguments: [FunctionArgument<Self>] = [
            .user, .elementId, .roomId, .now, .eventsKept,
        ]

        var room: RoomID
        var element: ElementID
        var user: UserID
        var now: Timestamp
        var eventsKept: Int

        struct Reply: FunctionReply {
            enum Field: String, ReplyField {
                case zIndex, offset
                var isOptional: Bool { self == .offset }
            }
            var zIndex: Int

            init(_ reply: NamedReply<Field>) throws(RedisError) {
                zIndex = try reply.int(.zIndex)
            }
        }
    }

    /// `element_delete.lua`: the element and its reactions gone, `element:deleted`.
    struct ElementDelete: ElementFunction, UserRequested, Stamped, EmittingRoomEvents {
        static let name = "element_delete"
        static let isCommittedChange = true
        static let keys: [FunctionKey<Self>] = [
            .room, .participants, .zOrder, .stream, .channel, .element, .reactions, .profiles, .presence, .unseen,
        ]
        static let arguments: [FunctionArgument<Self>] = [
            .user, .elementId, .roomId, .now, .eventsKept,
        ]

        var room: RoomID
        var element: ElementID
        var user: UserID
        var now: Timestamp
        var eventsKept: Int

        struct Reply: FunctionReply {
            enum Field: String, ReplyField { case offset, elementCount, unseen }
            var elementCount: Int
            var unseen: UnseenCounts

            init(_ reply: NamedReply<Field>) throws(RedisError) {
                elementCount = try reply.int(.elementCount)
                unseen = try reply.decode(.unseen)
            }
        }
    }

    /// `room_clear.lua`: every element gone, `room:cleared`.
    struct RoomClear: RoomFunction, UserRequested, Stamped, EmittingRoomEvents {
        static let name = "room_clear"
        static let isCommittedChange = true
        static let keys: [FunctionKey<Self>] = [.room, .participants, .zOrder, .stream, .channel, .presence, .unseen]
        static let arguments: [FunctionArgument<Self>] = [
            .user, .init("element_prefix") { RedisKeys.elementPrefix($0.room) }, .roomId,
            .now, .eventsKept, .init("reactions_suffix") { _ in RedisKeys.reactionsSuffix },
        ]

        var room: RoomID
        var user: UserID
        var now: Timestamp
        var eventsKept: Int

        struct Reply: FunctionReply {
            enum Field: String, ReplyField { case offset, removed, unseen }
            /// How many elements went.
            var removed: Int
            var unseen: UnseenCounts

            init(_ reply: NamedReply<Field>) throws(RedisError) {
                removed = try reply.int(.removed)
                unseen = try reply.decode(.unseen)
            }
        }
    }

    /// `elements_snapshot.lua`: the room's elements and the offset they are current at.
    struct ElementsSnapshot: RoomFunction, UserRequested {
        static let name = "elements_snapshot"
        static let isReadOnly = true
        static let keys: [FunctionKey<Self>] = [.room, .participants, .zOrder, .stream, .channel, .profiles]
        static let arguments: [FunctionArgument<Self>] = [
            .user, .init("element_prefix") { RedisKeys.elementPrefix($0.room) },
        ]

        var room: RoomID
        var user: UserID

        struct Reply: FunctionReply {
            enum Field: String, ReplyField { case offset, elements }
            var offset: String
            /// A JSON array, zIndex ascending.
            var elements: ByteBuffer

            init(_ reply: NamedReply<Field>) throws(RedisError) {
                offset = try reply.string(.offset)
                elements = try reply.bytes(.elements)
            }
        }
    }

    /// `reaction_toggle.lua`: the user's heart added or removed, announced per recipient.
    struct ReactionToggle: ElementFunction, UserRequested, Stamped, EmittingRoomEvents {
        static let name = "reaction_toggle"
        static let isCommittedChange = true
        static let keys: [FunctionKey<Self>] = [
            .room, .participants, .zOrder, .stream, .channel, .element, .reactions, .profiles,
            .optional("request") { f in f.request.map { RedisKeys.roomRequest(f.room, user: f.user, operation: .reactionToggle, request: $0) } },
        ]
        static let arguments: [FunctionArgument<Self>] = [
            .user, .elementId, .roomId, .now, .eventsKept,
            .init("reaction_draft") { $0.reactionDraft },
        ]

        var room: RoomID
        var element: ElementID
        var user: UserID
        var now: Timestamp
        var eventsKept: Int
        /// The new reaction as a JSON object without `createdAt`.
        var reactionDraft: String
        var request: RequestID?

        struct Reply: FunctionReply {
            enum Field: String, ReplyField {
                case action, reaction, count, topReactors, offset, creator, elementType, roomName, replayed
                var isOptional: Bool { self == .replayed }
            }
            /// `added` or `removed`.
            var action: String
            var reaction: ByteBuffer
            var count: Int
            var topReactors: ByteBuffer
            /// The element's creator, '' when unknown.
            var creator: String
            var elementType: String
            var roomName: String
            var isReplay: Bool

            init(_ reply: NamedReply<Field>) throws(RedisError) {
                action = try reply.string(.action)
                reaction = try reply.bytes(.reaction)
                count = try reply.int(.count)
                topReactors = try reply.bytes(.topReactors)
                creator = try reply.string(.creator)
                elementType = try reply.string(.elementType)
                roomName = try reply.string(.roomName)
                isReplay = reply.has(.replayed)
            }
        }
    }
}

/// Every participant's unseen element count, as element functions answer it (`unseen`: user,
/// count, user, count …).
struct UnseenCounts: RedisReplyDecodable, Sequence, Sendable {
    private var counts: [(UserID, Int)] = []

    init() {}

    init(redisReply: RedisReply) throws(RedisError) {
        for (user, count) in try RedisFields(redisReply: redisReply).values {
            guard let id = UserID(user), let value = Int(count) else { continue }
            counts.append((id, value))
        }
    }

    func makeIterator() -> IndexingIterator<[(UserID, Int)]> { counts.makeIterator() }
}
