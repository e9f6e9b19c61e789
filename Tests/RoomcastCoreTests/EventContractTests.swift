import Foundation
import NIOCore
import RedisClient
import RoomcastCore
import RoomcastTestSupport
import SocketIO
import Testing

/// The event contract end to end: every script that emits runs against a real Redis, and each
/// payload it published is read as a node reads it (``EventEnvelope``) and decoded with the
/// SocketIO codec.
@Suite("Event contract: every script's published frames")
struct EventContractTests {
    /// The events each emitting script publishes (a script's own file, preludes aside, calls
    /// `emit…` or `announce_presence`). A new emitting script fails ``everyEmittingScriptIsListed``
    /// until it is listed here and exercised below.
    static let emitted: [String: Set<ServerEvent>] = [
        "element_create": [.elementCreated],
        "element_update": [.elementUpdated],
        "element_transform": [.elementTransformed],
        "element_front": [.elementZIndexChanged],
        "element_delete": [.elementDeleted],
        "room_clear": [.roomCleared],
        "reaction_toggle": [.reactionAdded, .reactionRemoved],
        "message_send": [.messageNew],
        "presence_join": [.roomPresence],
        "presence_leave": [.roomPresence],
        "presence_refresh": [.roomPresence],
        "presence_reap": [.roomPresence],
        "notification_create": [.notificationNew, .badgeUpdated],
        "notification_read": [.badgeUpdated],
        "notification_read_all": [.badgeUpdated],
        "user_event_publish": [.roomCreated, .roomUpdated, .elementCreatedGlobal, .elementDeletedGlobal, .roomClearedGlobal],
    ]

    @Test("the scripts that emit are exactly the ones listed, and only _emit.lua writes frames")
    func everyEmittingScriptIsListed() throws {
        let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../Sources/RoomcastCore/Scripts").standardizedFileURL
        var emitting: Set<String> = []
        for file in try FileManager.default.contentsOfDirectory(atPath: directory.path) where file.hasSuffix(".lua") {
            let source = try String(contentsOf: directory.appendingPathComponent(file), encoding: .utf8)
            let code = source.split(separator: "\n").filter { !$0.trimmingCharacters(in: .whitespaces).hasPrefix("--") }.joined(separator: "\n")
            if file != "_emit.lua" {
                #expect(!code.contains("42["), "\(file) writes a Socket.IO frame itself")
                #expect(!code.contains("PUBLISH"), "\(file) publishes itself")
            }
            guard !file.hasPrefix("_") else { continue }
            if code.contains("emit") || code.contains("announce_presence") { emitting.insert(String(file.dropLast(4))) }
        }
        #expect(emitting == Set(Self.emitted.keys))
    }

    @Test("every published frame decodes as a Socket.IO event the contract names, on the right channel, with its offset")
    func publishedFramesDecode() async throws {
        try await withTestRedis { redis, server in
            let users = UserStore(redis: redis)
            let alice = try await users.create(username: "alice", passwordHash: "h", displayName: "Alice")
            let bob = try await users.create(username: "bob", passwordHash: "h", displayName: nil)
            let userChannels = [RedisKeys.userChannel(alice.id), RedisKeys.userChannel(bob.id)]
            try await withSubscriber(server, to: userChannels) { userInbox in
                // The changes with their per-user events, as the gateway makes them.
                let changes = RoomChanges(redis: redis)
                let room = try await changes.createRoom(by: alice.id, with: [bob.id], name: "contract").id
                let roomChannel = RedisKeys.roomChannel(room)
                try await withSubscriber(server, to: [roomChannel]) { roomInbox in
                    let presence = PresenceStore(redis: redis)
                    let elements = ElementStore(redis: redis)
                    let reactions = ReactionStore(redis: redis)
                    let notifications = NotificationStore(redis: redis)
                    _ = try await changes.renameRoom(room, to: "renamed", by: alice.id)
                    try await presence.join(room, user: alice.id, socket: "a1")
                    try await presence.join(room, user: bob.id, socket: "b1")
                    // Bob's second device changes nobody's presence: a frame for it alone.
                    let again = try await presence.join(room, user: bob.id, socket: "b2")
                    let joinerFrame = try #require(again.joinerFrame)
                    #expect(try Self.events(in: joinerFrame, offset: again.offset) == .roomPresence)
                    try await presence.leave(room, user: bob.id, socket: "b2")
                    let first = try await changes.createElement(try ElementStoreTests.note(), by: alice, in: room)
                    let second = try await changes.createElement(try ElementStoreTests.note(content: "two"), by: bob, in: room)
                    _ = try await elements.apply(first.id, with: try ElementStoreTests.changes(#"{"positionX":1.5,"content":"é \"q\""}"#), by: alice.id, in: room)
                    _ = try await elements.transform(second.id, with: try ElementStoreTests.transform(#"{"rotation":45}"#), by: bob.id, in: room)
                    _ = try await elements.bringToFront(first.id, by: alice.id, in: room)
                    _ = try await reactions.toggle(on: first.id, by: bob, in: room)
                    _ = try await reactions.toggle(on: first.id, by: bob, in: room)
                    _ = try await MessageStore(redis: redis).send("hello \u{1F600}", from: alice, to: room)
                    let note = try await notifications.create(NotificationFixture.draft(1), for: bob.id)
                    _ = try await notifications.markRead(note.notification.id, for: bob.id)
                    _ = try await notifications.create(NotificationFixture.draft(2), for: bob.id)
                    _ = try await notifications.markAllRead(for: bob.id)
                    // Bob's node dies: his member expires and the next refresh announces it.
                    _ = try await redis.send(
                        RedisCommand("ZADD", RedisKeys.roomPresence(room), "XX", Int(Timestamp.now().milliseconds) - 1, PresenceStore.member(user: bob.id, socket: "b1"))
                    )
                    try await presence.refresh(room, members: [PresenceStore.member(user: alice.id, socket: "a1")])
                    // Bob again, on a node that dies and is reaped.
                    let dead = try #require(NodeID("contract"))
                    try await presence.join(room, user: bob.id, socket: dead.rawValue + "00000000000000000001")
                    try await presence.reap(room, node: dead)
                    try await presence.leave(room, user: alice.id, socket: "a1")
                    _ = try await changes.deleteElement(second.id, by: alice.id, in: room)
                    _ = try await changes.clearRoom(room, by: bob.id)

                    try await roomInbox.fence(redis, on: [roomChannel])
                    try await userInbox.fence(redis, on: userChannels)
                    var seen: Set<ServerEvent> = []
                    for message in roomInbox.received + userInbox.received {
                        seen.formUnion(try Self.check(message, room: roomChannel, users: userChannels))
                    }
                    #expect(seen == Self.emitted.values.reduce(into: Set<ServerEvent>()) { $0.formUnion($1) })
                }
            }
        }
    }

    /// Reads `message` as a node does and decodes its frame(s); returns the events it carried.
    static func check(_ message: RedisPubSubMessage, room: String, users: [String]) throws -> Set<ServerEvent> {
        let envelope = try #require(EventEnvelope(payload: message.payload), "\(String(buffer: message.payload))")
        let offset = try #require(envelope.offset.map(String.init), "every stored event has an offset")
        #expect(StreamOffset(offset) != nil, "\(offset)")
        let frames = [envelope.frame] + (envelope.listedFrame.map { [$0] } ?? [])
        var events: Set<ServerEvent> = []
        for frame in frames {
            let event = try Self.events(in: frame, offset: message.channel == room ? offset : nil)
            if message.channel == room {
                #expect(ServerEvent.roomEvents.contains(event), "\(event) on a room channel")
            } else {
                #expect(users.contains(message.channel))
                #expect(ServerEvent.userEvents.contains(event), "\(event) on a user channel")
            }
            events.insert(event)
        }
        return events
    }

    /// Decodes `frame` as an Engine.IO message carrying a Socket.IO event of the contract, whose
    /// payload is a JSON object with `offset` (when given) as its offset member.
    static func events(in frame: ByteBuffer, offset: String?) throws -> ServerEvent {
        guard case .message(let body) = try EngineIOPacket(decoding: frame) else {
            throw FrameError("not an Engine.IO message: \(String(buffer: frame))")
        }
        let packet = try SocketIOPacket(decoding: body)
        #expect(packet.kind == .event && packet.namespace == "/" && packet.arguments.count == 1, "\(String(buffer: frame))")
        let event = try #require(packet.eventName.flatMap(ServerEvent.init(rawValue:)), "\(String(buffer: frame))")
        let payload = try #require(JSONObjectReader(Array(buffer: packet.arguments[0])), "\(String(buffer: frame))")
        if let offset {
            #expect(payload.string("offset") == offset, "\(String(buffer: frame))")
            #expect(payload.string("roomId") != nil, "\(String(buffer: frame))")
        }
        return event
    }
}
