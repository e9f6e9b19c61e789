import Foundation
import NIOCore
import RedisClient
import RoomcastCore
import RoomcastTestSupport
import Testing

/// ElementStore on a real Redis: state, events as published, and the element events and fields of
/// docs/clients/events.md.
@Suite("ElementStore against a real redis-server")
struct ElementStoreTests {
    /// Alice and Bob in one room, and Eve in none.
    struct Fixture: Sendable {
        var alice: User
        var bob: User
        var eve: User
        var room: RoomID
        var store: ElementStore

        var channel: String { RedisKeys.roomChannel(room) }
    }

    static func fixture(_ redis: any RedisClientProtocol, maxElements: Int = 5_000) async throws -> Fixture {
        let users = UserStore(redis: redis)
        let alice = try await users.create(username: "alice", passwordHash: "h", displayName: "Alice")
        let bob = try await users.create(username: "bob", passwordHash: "h", displayName: nil)
        let eve = try await users.create(username: "eve", passwordHash: "h", displayName: nil)
        let room = try await RoomStore(redis: redis).create(by: alice.id, with: [bob.id], name: nil)
        return Fixture(alice: alice, bob: bob, eve: eve, room: room.id, store: ElementStore(redis: redis, maxElements: maxElements))
    }

    // MARK: Helpers

    static func draft(_ json: String) throws -> ElementDraft {
        try JSONDecoder().decode(ElementDraft.self, from: Data(json.utf8))
    }

    static func note(x: Double = 10, y: Double = 20, content: String? = nil) throws -> ElementDraft {
        let text = content.map { #","content":"\#($0)""# } ?? ""
        return try draft(#"{"type":"note","positionX":\#(x),"positionY":\#(y),"width":100,"height":80\#(text)}"#)
    }

    static func changes(_ json: String) throws -> ElementChanges {
        try JSONDecoder().decode(ElementChanges.self, from: Data(json.utf8))
    }

    struct TransformBody: Decodable {
        var fields: ElementFields
        init(from decoder: any Decoder) throws {
            fields = try ElementFields(from: decoder, allowed: ElementFields.transformFields)
        }
    }

    static func transform(_ json: String) throws -> ElementFields {
        try JSONDecoder().decode(TransformBody.self, from: Data(json.utf8)).fields
    }

    /// A published element read back, to compare with what the store answered.
    static func element(_ json: JSONValue) throws -> Element {
        try LiveFixture.decode(Element.self, json)
    }

    /// Checks an `element:created`/`element:transformed` payload: exactly `roomId`, `element`
    /// (the store's answer) and `offset`.
    static func expectElementEvent(_ payload: JSONValue, room: RoomID, element: Element, offset: String) throws {
        #expect(payload.objectValue?.keys.sorted() == ["element", "offset", "roomId"])
        #expect(payload["roomId"] == .string(room.rawValue))
        #expect(payload["offset"] == .string(offset))
        #expect(try Self.element(payload["element"]) == element)
    }

    /// One published room event: its offset, name and payload.
    struct Published: CustomStringConvertible {
        var offset: String
        var name: String
        var payload: JSONValue
        var description: String { "\(offset) \(name) \(payload)" }
    }

    /// Parses `<offset> 42["name",{...}]` payloads; the payload's `offset` must be the prefix.
    static func published(_ messages: [RedisPubSubMessage]) throws -> [Published] {
        try messages.map { message in
            let envelope = try #require(EventEnvelope(payload: message.payload))
            let offset = try #require(envelope.offset.map(String.init))
            let text = String(buffer: envelope.frame)
            #expect(text.hasPrefix("42["), "\(text)")
            let array = try JSONValue(String(text.dropFirst(2)))
            #expect(array.arrayValue?.count == 2, "\(text)")
            let name = try #require(array[0].stringValue)
            let payload = array[1]
            #expect(payload["offset"].stringValue == offset, "\(text)")
            return Published(offset: offset, name: name, payload: payload)
        }
    }

    /// Waits for `count` events on the fixture's channel and returns them parsed.
    static func waitForEvents(_ inbox: MessageInbox, _ count: Int) async throws -> [Published] {
        try published(try await inbox.wait(for: count))
    }

    static func lastStreamID(_ redis: any RedisClientProtocol, _ room: RoomID) async throws -> String? {
        try StreamEntry.entries(try await redis.send("XREVRANGE", RedisKeys.roomStream(room), "+", "-", "COUNT", 1)).first?.id
    }

    static func streamLength(_ redis: any RedisClientProtocol, _ room: RoomID) async throws -> Int {
        try await redis.send(RedisCommand("XLEN", RedisKeys.roomStream(room)), as: Int.self)
    }

    static func roomFields(_ redis: any RedisClientProtocol, _ room: RoomID) async throws -> [String: String] {
        try await redis.send("HGETALL", RedisKeys.room(room)).fields
    }

    /// `ZRANGE room:{R}:z 0 -1 WITHSCORES` as (id, zIndex) pairs, bottom first.
    static func zOrder(_ redis: any RedisClientProtocol, _ room: RoomID) async throws -> [(id: String, z: Int)] {
        let flat = try await redis.send(RedisCommand("ZRANGE", RedisKeys.roomZOrder(room), 0, -1, "WITHSCORES"), as: [String].self)
        return stride(from: 0, to: flat.count, by: 2).map { (flat[$0], Int(flat[$0 + 1]) ?? -1) }
    }

    /// Sets the room's `updatedAt` to 1 so a test can see whether the next step moves it.
    static func resetUpdatedAt(_ redis: any RedisClientProtocol, _ room: RoomID) async throws {
        _ = try await redis.send("HSET", RedisKeys.room(room), "updatedAt", "1")
    }

    static func updatedAtMoved(_ redis: any RedisClientProtocol, _ room: RoomID, since start: Int64) async throws -> Bool {
        let value = try #require(Int64(try await roomFields(redis, room)["updatedAt"] ?? ""))
        return value >= start && value <= Timestamp.now().milliseconds
    }

    // MARK: Create

    @Test("create stores the element on top, counts it, moves updatedAt and publishes element:created")
    func create() async throws {
        try await withTestRedis { redis, server in
            let f = try await Self.fixture(redis)
            try await withSubscriber(server, to: [f.channel]) { inbox in
                try await Self.resetUpdatedAt(redis, f.room)
                let start = Timestamp.now().milliseconds
                let element = try await f.store.create(try Self.note(x: 10, y: 20, content: "hello"), by: f.bob, in: f.room)
                #expect(element.roomId == f.room)
                #expect(element.type == "note")
                #expect(element.positionX == 10)
                #expect(element.positionY == 20)
                #expect(element.width == 100)
                #expect(element.height == 80)
                #expect(element.rotation == 0)
                #expect(element.scaleX == 1)
                #expect(element.scaleY == 1)
                #expect(element.content == "hello")
                #expect(element.imageUrl == nil)
                #expect(element.duration == nil)
                #expect(element.zIndex == 1)
                #expect(element.createdBy == f.bob.id)
                #expect(element.creator == f.bob)
                #expect(element.reactions == nil)
                #expect(element.createdAt.milliseconds >= start && element.createdAt.milliseconds <= Timestamp.now().milliseconds)

                let events = try await Self.waitForEvents(inbox, 1)
                let event = try #require(events.first)
                #expect(event.name == "element:created")
                try Self.expectElementEvent(event.payload, room: f.room, element: element, offset: event.offset)
                // Exactly the contract's members: optional ones absent, reactions an explicit null.
                #expect(
                    Set(event.payload["element"].objectValue.map { Array($0.keys) } ?? []) == [
                        "id", "roomId", "type", "positionX", "positionY", "width", "height", "rotation", "scaleX", "scaleY",
                        "content", "zIndex", "createdBy", "createdAt", "creator", "reactions",
                    ]
                )
                #expect(event.payload["element"]["reactions"] == .null)
                #expect(event.payload["element"]["creator"]["username"] == "bob")
                #expect(event.offset == (try await Self.lastStreamID(redis, f.room)))

                let hash = try await redis.send("HGETALL", RedisKeys.element(element.id, in: f.room)).fields
                #expect(hash["id"] == element.id.rawValue)
                #expect(hash["roomId"] == f.room.rawValue)
                #expect(hash["type"] == "note")
                #expect(hash["createdBy"] == f.bob.id.rawValue)
                #expect(hash["content"] == "hello")
                #expect(hash["positionX"].flatMap(Double.init) == 10)
                #expect(Set(hash.keys).isSuperset(of: ["rotation", "scaleX", "scaleY", "createdAt", "createdBy"]))
                // The creator by reference: the profile comes from the room's profiles when sent.
                #expect(hash["creator"] == nil)
                #expect(try await Self.zOrder(redis, f.room).map(\.id) == [element.id.rawValue])
                #expect(try await Self.zOrder(redis, f.room).map(\.z) == [1])

                let room = try await Self.roomFields(redis, f.room)
                #expect(room["elementCount"] == "1")
                #expect(room["zCounter"] == "1")
                #expect(try await Self.updatedAtMoved(redis, f.room, since: start))
                #expect(try await RoomStore(redis: redis).room(f.room)?.elementCount == 1)
            }
        }
    }

    @Test("each new element goes on top: zIndex is unique and increasing; every field and type round-trips")
    func createStacksAndRoundTrips() async throws {
        try await withTestRedis { redis, server in
            let f = try await Self.fixture(redis)
            try await withSubscriber(server, to: [f.channel]) { inbox in
                let photo = try await f.store.create(
                    try Self.draft(
                        #"{"type":"photo","positionX":-5.25,"positionY":1e7,"width":0.5,"height":1e6,"rotation":-45.5,"scaleX":1000,"scaleY":0.001,"imageUrl":"https://cdn.example.com/a/b.jpg?x=1&y=\"q\"","thumbnailUrl":"https://cdn.example.com/t.jpg"}"#
                    ),
                    by: f.alice, in: f.room
                )
                #expect(photo.zIndex == 1)
                #expect(photo.positionX == -5.25)
                #expect(photo.positionY == 1e7)
                #expect(photo.width == 0.5)
                #expect(photo.height == 1e6)
                #expect(photo.rotation == -45.5)
                #expect(photo.scaleX == 1000)
                #expect(photo.scaleY == 0.001)
                #expect(photo.imageUrl == #"https://cdn.example.com/a/b.jpg?x=1&y="q""#)
                #expect(photo.thumbnailUrl == "https://cdn.example.com/t.jpg")
                #expect(photo.creator == f.alice)

                let audio = try await f.store.create(
                    try Self.draft(#"{"type":"audio","positionX":0,"positionY":0,"width":10,"height":10,"audioUrl":"https://x/a.m4a","duration":12.75}"#),
                    by: f.bob, in: f.room
                )
                let video = try await f.store.create(
                    try Self.draft(#"{"type":"video","positionX":0,"positionY":0,"width":10,"height":10,"videoUrl":"https://x/v.mp4","duration":0}"#),
                    by: f.bob, in: f.room
                )
                let text = "quote \" backslash \\ newline \n tab \t emoji 🎉👩‍👩‍👧 日本 </script> \u{2028}"
                let encodedText = String(decoding: try JSONEncoder().encode(text), as: UTF8.self)
                let sticker = try await f.store.create(
                    try Self.draft(#"{"type":"sticker","positionX":0,"positionY":0,"width":10,"height":10,"stickerText":\#(encodedText),"content":\#(encodedText)}"#),
                    by: f.alice, in: f.room
                )
                #expect([photo, audio, video, sticker].map(\.zIndex) == [1, 2, 3, 4])
                #expect(audio.duration == 12.75)
                #expect(audio.audioUrl == "https://x/a.m4a")
                #expect(video.duration == 0)
                #expect(video.videoUrl == "https://x/v.mp4")
                #expect(sticker.stickerText == text)
                #expect(sticker.content == text)

                let events = try await Self.waitForEvents(inbox, 4)
                #expect(events.map(\.name) == Array(repeating: "element:created", count: 4))
                for (event, element) in zip(events, [photo, audio, video, sticker]) {
                    #expect(try Self.element(event.payload["element"]) == element)
                }
                let offsets = events.compactMap { StreamOffset($0.offset) }
                #expect(offsets.count == 4)
                #expect(zip(offsets, offsets.dropFirst()).allSatisfy { $0 < $1 })

                let snapshot = try await f.store.snapshot(of: f.room, for: f.bob.id)
                #expect(snapshot.elements == [photo, audio, video, sticker])
                #expect(try await Self.roomFields(redis, f.room)["elementCount"] == "4")
            }
        }
    }

    @Test("numbers come back exactly as sent, in the ack, the event and the snapshot")
    func numbersRoundTripExactly() async throws {
        try await withTestRedis { redis, server in
            let f = try await Self.fixture(redis)
            try await withSubscriber(server, to: [f.channel]) { inbox in
                let x = 0.1 + 0.2  // 0.30000000000000004
                let y = 562.0 / 3.0  // 187.33333333333334
                let width = 123.45678901234567
                let rotation = -1.0 / 7.0
                let json = #"{"type":"note","positionX":\#(x),"positionY":\#(y),"width":\#(width),"height":1e-7,"rotation":\#(rotation)}"#
                let element = try await f.store.create(try Self.draft(json), by: f.alice, in: f.room)
                #expect(element.positionX == x)
                #expect(element.positionY == y)
                #expect(element.width == width)
                #expect(element.height == 1e-7)
                #expect(element.rotation == rotation)
                let event = try #require(try await Self.waitForEvents(inbox, 1).first)
                #expect(event.payload["element"]["positionX"].doubleValue == x)
                #expect(event.payload["element"]["positionY"].doubleValue == y)
                #expect(event.payload["element"]["width"].doubleValue == width)
                #expect(try await f.store.snapshot(of: f.room, for: f.alice.id).elements == [element])

                let z = 1234567.8912345678
                _ = try await f.store.update(element.id, with: try Self.changes(#"{"positionX":\#(z)}"#), by: f.alice.id, in: f.room)
                let updated = try #require(try await Self.waitForEvents(inbox, 2).last)
                #expect(updated.payload["updates"]["positionX"].doubleValue == z)
                #expect(try await f.store.snapshot(of: f.room, for: f.alice.id).elements.first?.positionX == z)
            }
        }
    }

    // MARK: Update

    @Test("update without a move changes fields, keeps the zIndex and publishes updates without zIndex")
    func updateWithoutMove() async throws {
        try await withTestRedis { redis, server in
            let f = try await Self.fixture(redis)
            try await withSubscriber(server, to: [f.channel]) { inbox in
                let first = try await f.store.create(try Self.note(content: "draft"), by: f.alice, in: f.room)
                let second = try await f.store.create(try Self.note(), by: f.alice, in: f.room)
                try await Self.resetUpdatedAt(redis, f.room)
                let start = Timestamp.now().milliseconds
                let updated = try await f.store.update(
                    first.id, with: try Self.changes(#"{"content":"final","width":250.5,"rotation":30}"#), by: f.bob.id, in: f.room
                )
                #expect(updated.content == "final")
                #expect(updated.width == 250.5)
                #expect(updated.rotation == 30)
                #expect(updated.zIndex == 1)
                #expect(updated.id == first.id)
                #expect(updated.createdBy == f.alice.id)
                #expect(updated.creator == f.alice)
                #expect(updated.createdAt == first.createdAt)
                #expect(updated.positionX == first.positionX)

                let event = try #require(try await Self.waitForEvents(inbox, 3).last)
                #expect(event.name == "element:updated")
                #expect(
                    event.payload == [
                        "roomId": .string(f.room.rawValue), "elementId": .string(first.id.rawValue),
                        "updates": ["content": "final", "width": 250.5, "rotation": 30], "offset": .string(event.offset),
                    ]
                )
                #expect(try await Self.zOrder(redis, f.room).map(\.id) == [first.id.rawValue, second.id.rawValue])
                #expect(try await Self.roomFields(redis, f.room)["zCounter"] == "2")
                #expect(try await Self.updatedAtMoved(redis, f.room, since: start))
                #expect(try await f.store.snapshot(of: f.room, for: f.alice.id).elements == [updated, second])
            }
        }
    }

    @Test("a move brings the element to front with updates.zIndex; a move of the top element carries no zIndex")
    func updateWithMove() async throws {
        try await withTestRedis { redis, server in
            let f = try await Self.fixture(redis)
            try await withSubscriber(server, to: [f.channel]) { inbox in
                let a = try await f.store.create(try Self.note(), by: f.alice, in: f.room)
                let b = try await f.store.create(try Self.note(), by: f.alice, in: f.room)

                let moved = try await f.store.update(a.id, with: try Self.changes(#"{"positionX":5}"#), by: f.bob.id, in: f.room)
                #expect(moved.zIndex == 3)
                #expect(moved.positionX == 5)
                var event = try #require(try await Self.waitForEvents(inbox, 3).last)
                #expect(
                    event.payload == [
                        "roomId": .string(f.room.rawValue), "elementId": .string(a.id.rawValue),
                        "updates": ["positionX": 5, "zIndex": 3], "offset": .string(event.offset),
                    ]
                )
                #expect(try await Self.zOrder(redis, f.room).map(\.id) == [b.id.rawValue, a.id.rawValue])

                // Already on top: moved again, no new zIndex.
                try await Self.resetUpdatedAt(redis, f.room)
                let start = Timestamp.now().milliseconds
                let again = try await f.store.update(a.id, with: try Self.changes(#"{"positionY":-7.5}"#), by: f.bob.id, in: f.room)
                #expect(again.zIndex == 3)
                #expect(again.positionY == -7.5)
                event = try #require(try await Self.waitForEvents(inbox, 4).last)
                #expect(
                    event.payload == [
                        "roomId": .string(f.room.rawValue), "elementId": .string(a.id.rawValue),
                        "updates": ["positionY": -7.5], "offset": .string(event.offset),
                    ]
                )
                #expect(try await Self.roomFields(redis, f.room)["zCounter"] == "3")
                #expect(try await Self.updatedAtMoved(redis, f.room, since: start))

                // A move of the bottom element together with other fields.
                let bMoved = try await f.store.update(b.id, with: try Self.changes(#"{"positionY":1,"content":"x"}"#), by: f.alice.id, in: f.room)
                #expect(bMoved.zIndex == 4)
                event = try #require(try await Self.waitForEvents(inbox, 5).last)
                #expect(event.payload["updates"] == ["positionY": 1, "content": "x", "zIndex": 4])
                let zs = try await Self.zOrder(redis, f.room)
                #expect(zs.map(\.id) == [a.id.rawValue, b.id.rawValue])
                #expect(zs.map(\.z) == [3, 4])
            }
        }
    }

    @Test("apply (a socket's update) answers with the event's updates and offset, and reads no element back")
    func applyAnswersTheChangeOnly() async throws {
        try await withTestRedis { redis, server in
            let f = try await Self.fixture(redis)
            try await withSubscriber(server, to: [f.channel]) { inbox in
                let a = try await f.store.create(try Self.note(), by: f.alice, in: f.room)
                _ = try await f.store.create(try Self.note(), by: f.alice, in: f.room)
                _ = try await Self.waitForEvents(inbox, 2)
                // Every call once, so that script loading is not counted below.
                _ = try await f.store.apply(a.id, with: try Self.changes(#"{"content":"warm"}"#), by: f.bob.id, in: f.room)
                _ = try await f.store.update(a.id, with: try Self.changes(#"{"content":"warm"}"#), by: f.bob.id, in: f.room)
                _ = try await Self.waitForEvents(inbox, 4)

                let before = try await UnseenCountTests.commandCalls(server)
                let moved = try await f.store.apply(a.id, with: try Self.changes(#"{"positionX":5.25,"content":"moved"}"#), by: f.bob.id, in: f.room)
                let lean = UnseenCountTests.difference(try await UnseenCountTests.commandCalls(server), before)
                let event = try #require(try await Self.waitForEvents(inbox, 5).last)
                #expect(event.name == "element:updated" && moved.offset == event.offset)
                #expect(try JSONValue(String(buffer: moved.updates)) == event.payload["updates"])
                #expect(event.payload["updates"] == ["positionX": 5.25, "content": "moved", "zIndex": 3])
                #expect(lean["hgetall"] == nil, "\(lean)")

                // The REST path reads the element back for its answer (HGETALL).
                let full = try await UnseenCountTests.commandCalls(server)
                _ = try await f.store.update(a.id, with: try Self.changes(#"{"content":"full"}"#), by: f.bob.id, in: f.room)
                let fullCalls = UnseenCountTests.difference(try await UnseenCountTests.commandCalls(server), full)
                #expect((fullCalls["hgetall"] ?? 0) >= 1, "\(fullCalls)")
                #expect(try await f.store.snapshot(of: f.room, for: f.alice.id).elements.last?.content == "full")
            }
        }
    }

    // MARK: Transform

    @Test("transform applies the fields, puts the element on top and publishes element:transformed with the element")
    func transform() async throws {
        try await withTestRedis { redis, server in
            let f = try await Self.fixture(redis)
            try await withSubscriber(server, to: [f.channel]) { inbox in
                let a = try await f.store.create(try Self.note(), by: f.alice, in: f.room)
                let b = try await f.store.create(try Self.note(), by: f.alice, in: f.room)
                try await Self.resetUpdatedAt(redis, f.room)
                let start = Timestamp.now().milliseconds
                let transformed = try await f.store.transform(
                    a.id, with: try Self.transform(#"{"scaleX":2,"scaleY":1.5,"rotation":90,"width":40,"height":30,"positionX":-1,"positionY":-2}"#),
                    by: f.bob.id, in: f.room
                )
                #expect(transformed.zIndex == 3)
                #expect(transformed.scaleX == 2)
                #expect(transformed.scaleY == 1.5)
                #expect(transformed.rotation == 90)
                #expect(transformed.width == 40)
                #expect(transformed.height == 30)
                #expect(transformed.positionX == -1)
                #expect(transformed.positionY == -2)
                #expect(transformed.createdBy == f.alice.id)
                var event = try #require(try await Self.waitForEvents(inbox, 3).last)
                #expect(event.name == "element:transformed")
                try Self.expectElementEvent(event.payload, room: f.room, element: transformed, offset: event.offset)
                #expect(try await Self.updatedAtMoved(redis, f.room, since: start))
                #expect(try await Self.zOrder(redis, f.room).map(\.id) == [b.id.rawValue, a.id.rawValue])

                // On top already: stays at its zIndex, still one event.
                let again = try await f.store.transform(a.id, with: try Self.transform(#"{"rotation":180}"#), by: f.bob.id, in: f.room)
                #expect(again.zIndex == 3)
                #expect(again.scaleX == 2)
                event = try #require(try await Self.waitForEvents(inbox, 4).last)
                #expect(try Self.element(event.payload["element"]) == again)

                // An empty transform still brings the element to front.
                let front = try await f.store.transform(b.id, with: try Self.transform("{}"), by: f.alice.id, in: f.room)
                #expect(front.zIndex == 4)
                #expect(front.width == b.width)
                event = try #require(try await Self.waitForEvents(inbox, 5).last)
                #expect(event.name == "element:transformed")
                #expect(event.payload["element"]["zIndex"] == 4)
                #expect(try await f.store.snapshot(of: f.room, for: f.bob.id).elements == [again, front])
            }
        }
    }

    // MARK: Bring to front

    @Test("bring-to-front takes the next zIndex and publishes element:z-index-changed; the top element changes nothing")
    func bringToFront() async throws {
        try await withTestRedis { redis, server in
            let f = try await Self.fixture(redis)
            try await withSubscriber(server, to: [f.channel]) { inbox in
                let a = try await f.store.create(try Self.note(), by: f.alice, in: f.room)
                let b = try await f.store.create(try Self.note(), by: f.alice, in: f.room)
                let c = try await f.store.create(try Self.note(), by: f.alice, in: f.room)
                try await Self.resetUpdatedAt(redis, f.room)
                let start = Timestamp.now().milliseconds
                #expect(try await f.store.bringToFront(a.id, by: f.bob.id, in: f.room) == 4)
                var event = try #require(try await Self.waitForEvents(inbox, 4).last)
                #expect(event.name == "element:z-index-changed")
                #expect(
                    event.payload == [
                        "roomId": .string(f.room.rawValue), "elementId": .string(a.id.rawValue), "zIndex": 4, "offset": .string(event.offset),
                    ]
                )
                #expect(try await Self.updatedAtMoved(redis, f.room, since: start))
                #expect(try await Self.zOrder(redis, f.room).map(\.id) == [b.id, c.id, a.id].map(\.rawValue))

                // The top element: same zIndex back, no event, no stream entry, updatedAt untouched.
                try await Self.resetUpdatedAt(redis, f.room)
                let length = try await Self.streamLength(redis, f.room)
                #expect(try await f.store.bringToFront(a.id, by: f.alice.id, in: f.room) == 4)
                #expect(try await Self.streamLength(redis, f.room) == length)
                #expect(try await Self.roomFields(redis, f.room)["updatedAt"] == "1")
                #expect(try await Self.roomFields(redis, f.room)["zCounter"] == "4")
                // The next event published is the next real change: nothing came in between.
                #expect(try await f.store.bringToFront(b.id, by: f.alice.id, in: f.room) == 5)
                let events = try await Self.waitForEvents(inbox, 5)
                try await inbox.fence(redis, on: [f.channel])
                #expect(inbox.received.count == 5)
                event = try #require(events.last)
                #expect(event.payload["elementId"].stringValue == b.id.rawValue)
                #expect(event.payload["zIndex"] == 5)

                let zs = try await Self.zOrder(redis, f.room)
                #expect(zs.map(\.id) == [c.id, a.id, b.id].map(\.rawValue))
                #expect(zs.map(\.z) == [3, 4, 5])
                let snapshot = try await f.store.snapshot(of: f.room, for: f.alice.id)
                #expect(snapshot.elements.map(\.id) == [c.id, a.id, b.id])
                #expect(snapshot.elements.map(\.zIndex) == [3, 4, 5])
                #expect(snapshot.offset == event.offset)
            }
        }
    }

    // MARK: Delete and clear

    @Test("delete removes the hash, the z-order member and the reactions, counts down and publishes element:deleted")
    func delete() async throws {
        try await withTestRedis { redis, server in
            let f = try await Self.fixture(redis)
            try await withSubscriber(server, to: [f.channel]) { inbox in
                let a = try await f.store.create(try Self.note(), by: f.alice, in: f.room)
                let b = try await f.store.create(try Self.note(), by: f.alice, in: f.room)
                _ = try await redis.send("SADD", RedisKeys.elementReactions(a.id, in: f.room), f.bob.id.rawValue)
                try await Self.resetUpdatedAt(redis, f.room)
                let start = Timestamp.now().milliseconds
                #expect(try await f.store.delete(a.id, by: f.bob.id, in: f.room) == 1)
                let event = try #require(try await Self.waitForEvents(inbox, 3).last)
                #expect(event.name == "element:deleted")
                #expect(event.payload == ["roomId": .string(f.room.rawValue), "elementId": .string(a.id.rawValue), "offset": .string(event.offset)])
                #expect(
                    try await redis.send(RedisCommand("EXISTS", RedisKeys.element(a.id, in: f.room), RedisKeys.elementReactions(a.id, in: f.room)), as: Int.self)
                        == 0
                )
                #expect(try await Self.zOrder(redis, f.room).map(\.id) == [b.id.rawValue])
                #expect(try await Self.roomFields(redis, f.room)["elementCount"] == "1")
                #expect(try await Self.updatedAtMoved(redis, f.room, since: start))
                #expect(try await f.store.snapshot(of: f.room, for: f.alice.id).elements == [b])

                // Deleting it again: not_found, and nothing changes.
                await expectRoomcastError(.notFound) { try await f.store.delete(a.id, by: f.bob.id, in: f.room) }
                #expect(try await Self.roomFields(redis, f.room)["elementCount"] == "1")
                #expect(try await f.store.delete(b.id, by: f.alice.id, in: f.room) == 0)
                #expect(try await Self.roomFields(redis, f.room)["elementCount"] == "0")
                #expect(try await server.keys(matching: "room:{\(f.room)}:element:*") == [])
                #expect(try await redis.send(RedisCommand("EXISTS", RedisKeys.roomZOrder(f.room)), as: Int.self) == 0)
            }
        }
    }

    @Test("clear removes every element key and the z-order, zeroes the count and publishes room:cleared")
    func clear() async throws {
        try await withTestRedis { redis, server in
            let f = try await Self.fixture(redis)
            try await withSubscriber(server, to: [f.channel]) { inbox in
                var created: [Element] = []
                for index in 0..<5 {
                    created.append(try await f.store.create(try Self.note(x: Double(index)), by: index.isMultiple(of: 2) ? f.alice : f.bob, in: f.room))
                }
                _ = try await redis.send("SADD", RedisKeys.elementReactions(created[1].id, in: f.room), f.alice.id.rawValue)
                #expect(try await server.keys(matching: "room:{\(f.room)}:element:*").count == 6)
                // Another room's elements stay.
                let other = try await RoomStore(redis: redis).create(by: f.alice.id, with: [f.eve.id], name: nil)
                let kept = try await f.store.create(try Self.note(), by: f.eve, in: other.id)

                try await Self.resetUpdatedAt(redis, f.room)
                let start = Timestamp.now().milliseconds
                #expect(try await f.store.clear(f.room, by: f.bob.id) == 5)
                let event = try #require(try await Self.waitForEvents(inbox, 6).last)
                #expect(event.name == "room:cleared")
                #expect(event.payload == ["roomId": .string(f.room.rawValue), "offset": .string(event.offset)])
                #expect(try await server.keys(matching: "room:{\(f.room)}:element:*") == [])
                #expect(try await redis.send(RedisCommand("EXISTS", RedisKeys.roomZOrder(f.room)), as: Int.self) == 0)
                let room = try await Self.roomFields(redis, f.room)
                #expect(room["elementCount"] == "0")
                #expect(try await Self.updatedAtMoved(redis, f.room, since: start))
                let snapshot = try await f.store.snapshot(of: f.room, for: f.alice.id)
                #expect(snapshot.elements.isEmpty)
                #expect(String(buffer: snapshot.json) == "[]")
                #expect(snapshot.offset == event.offset)
                #expect(try await f.store.snapshot(of: other.id, for: f.eve.id).elements == [kept])

                // Clearing an empty room is fine and still an event.
                #expect(try await f.store.clear(f.room, by: f.alice.id) == 0)
                #expect(try await Self.waitForEvents(inbox, 7).last?.name == "room:cleared")

                // New elements keep stacking above everything ever used.
                let next = try await f.store.create(try Self.note(), by: f.alice, in: f.room)
                #expect(next.zIndex == 6)
                #expect(try await Self.roomFields(redis, f.room)["elementCount"] == "1")
            }
        }
    }

    // MARK: Snapshot

    @Test("snapshot: zIndex ascending, offset of the last stream entry (0-0 for none), messages included")
    func snapshot() async throws {
        try await withTestRedis { redis, _ in
            let f = try await Self.fixture(redis)
            let empty = try await f.store.snapshot(of: f.room, for: f.bob.id)
            #expect(empty.offset == "0-0")
            #expect(String(buffer: empty.json) == "[]")

            // A chat message is a room event too: the snapshot is current as of it.
            let (_, messageOffset) = try await MessageStore(redis: redis).send("hi", from: f.alice, to: f.room)
            let afterMessage = try await f.store.snapshot(of: f.room, for: f.bob.id)
            #expect(afterMessage.offset == messageOffset)
            #expect(afterMessage.elements.isEmpty)

            let a = try await f.store.create(try Self.note(), by: f.alice, in: f.room)
            let b = try await f.store.create(try Self.note(), by: f.bob, in: f.room)
            let c = try await f.store.create(try Self.note(), by: f.alice, in: f.room)
            _ = try await f.store.bringToFront(a.id, by: f.alice.id, in: f.room)
            _ = try await f.store.update(b.id, with: try Self.changes(#"{"positionX":99}"#), by: f.alice.id, in: f.room)
            let snapshot = try await f.store.snapshot(of: f.room, for: f.bob.id)
            #expect(snapshot.elements.map(\.id) == [c.id, a.id, b.id])
            #expect(snapshot.elements.map(\.zIndex) == [3, 4, 5])
            #expect(snapshot.elements.last?.positionX == 99)
            #expect(snapshot.offset == (try await Self.lastStreamID(redis, f.room)))
            // The raw JSON is an array of complete elements.
            let raw = try JSONValue(String(buffer: snapshot.json))
            #expect(raw.arrayValue?.count == 3)
            // A note without content: exactly the contract's members, optional ones absent.
            #expect(
                Set(raw[0].objectValue.map { Array($0.keys) } ?? []) == [
                    "id", "roomId", "type", "positionX", "positionY", "width", "height", "rotation", "scaleX", "scaleY",
                    "zIndex", "createdBy", "createdAt", "creator", "reactions",
                ]
            )
            #expect(raw[2]["creator"]["username"] == "bob")
            #expect(raw[2]["reactions"] == .null)

            await expectRoomcastError(.forbidden) { try await f.store.snapshot(of: f.room, for: f.eve.id) }
            await expectRoomcastError(.notFound) { try await f.store.snapshot(of: .random(), for: f.alice.id) }
        }
    }

    // MARK: Refusals

    @Test("non-participants are forbidden, unknown rooms and elements not_found, and nothing is written")
    func refusals() async throws {
        try await withTestRedis { redis, server in
            let f = try await Self.fixture(redis)
            let element = try await f.store.create(try Self.note(), by: f.alice, in: f.room)
            try await withSubscriber(server, to: [f.channel]) { inbox in
                let length = try await Self.streamLength(redis, f.room)
                let before = try await Self.roomFields(redis, f.room)
                let hashBefore = try await redis.send("HGETALL", RedisKeys.element(element.id, in: f.room)).fields

                // Eve is not a participant.
                await expectRoomcastError(.forbidden) { try await f.store.create(try Self.note(), by: f.eve, in: f.room) }
                await expectRoomcastError(.forbidden) { try await f.store.update(element.id, with: try Self.changes(#"{"content":"x"}"#), by: f.eve.id, in: f.room) }
                await expectRoomcastError(.forbidden) { try await f.store.update(element.id, with: try Self.changes(#"{"positionX":1}"#), by: f.eve.id, in: f.room) }
                await expectRoomcastError(.forbidden) { try await f.store.transform(element.id, with: try Self.transform(#"{"scaleX":3}"#), by: f.eve.id, in: f.room) }
                await expectRoomcastError(.forbidden) { try await f.store.bringToFront(element.id, by: f.eve.id, in: f.room) }
                await expectRoomcastError(.forbidden) { try await f.store.delete(element.id, by: f.eve.id, in: f.room) }
                await expectRoomcastError(.forbidden) { try await f.store.clear(f.room, by: f.eve.id) }
                // Even for an element that does not exist, an outsider learns nothing but forbidden.
                await expectRoomcastError(.forbidden) { try await f.store.delete(.random(), by: f.eve.id, in: f.room) }

                // Unknown elements.
                let unknown = ElementID.random()
                await expectRoomcastError(.notFound) { try await f.store.update(unknown, with: try Self.changes(#"{"content":"x"}"#), by: f.alice.id, in: f.room) }
                await expectRoomcastError(.notFound) { try await f.store.update(unknown, with: try Self.changes(#"{"positionX":1}"#), by: f.alice.id, in: f.room) }
                await expectRoomcastError(.notFound) { try await f.store.transform(unknown, with: try Self.transform(#"{"scaleX":3}"#), by: f.alice.id, in: f.room) }
                await expectRoomcastError(.notFound) { try await f.store.bringToFront(unknown, by: f.alice.id, in: f.room) }
                await expectRoomcastError(.notFound) { try await f.store.delete(unknown, by: f.alice.id, in: f.room) }
                #expect(try await redis.send(RedisCommand("EXISTS", RedisKeys.element(unknown, in: f.room)), as: Int.self) == 0)
                #expect(try await redis.send(RedisCommand("ZSCORE", RedisKeys.roomZOrder(f.room), unknown.rawValue)) == .null)

                // Unknown rooms.
                let nowhere = RoomID.random()
                await expectRoomcastError(.notFound) { try await f.store.create(try Self.note(), by: f.alice, in: nowhere) }
                await expectRoomcastError(.notFound) { try await f.store.update(element.id, with: try Self.changes(#"{"content":"x"}"#), by: f.alice.id, in: nowhere) }
                await expectRoomcastError(.notFound) { try await f.store.transform(element.id, with: try Self.transform("{}"), by: f.alice.id, in: nowhere) }
                await expectRoomcastError(.notFound) { try await f.store.bringToFront(element.id, by: f.alice.id, in: nowhere) }
                await expectRoomcastError(.notFound) { try await f.store.delete(element.id, by: f.alice.id, in: nowhere) }
                await expectRoomcastError(.notFound) { try await f.store.clear(nowhere, by: f.alice.id) }
                #expect(try await server.keys(matching: "room:{\(nowhere)}*") == [])

                // An element of another room is unknown here.
                let other = try await RoomStore(redis: redis).create(by: f.alice.id, with: [f.eve.id], name: nil)
                let elsewhere = try await f.store.create(try Self.note(), by: f.eve, in: other.id)
                await expectRoomcastError(.notFound) { try await f.store.delete(elsewhere.id, by: f.alice.id, in: f.room) }
                await expectRoomcastError(.notFound) { try await f.store.bringToFront(elsewhere.id, by: f.bob.id, in: f.room) }

                #expect(try await Self.streamLength(redis, f.room) == length)
                #expect(try await Self.roomFields(redis, f.room) == before)
                #expect(try await redis.send("HGETALL", RedisKeys.element(element.id, in: f.room)).fields == hashBefore)
                try await inbox.fence(redis, on: [f.channel])
                #expect(inbox.received.isEmpty)
            }
        }
    }

    @Test("the element limit refuses the next create with limit_exceeded; a delete makes room again")
    func limit() async throws {
        try await withTestRedis { redis, server in
            let f = try await Self.fixture(redis, maxElements: 3)
            var created: [Element] = []
            for _ in 0..<3 { created.append(try await f.store.create(try Self.note(), by: f.alice, in: f.room)) }
            let length = try await Self.streamLength(redis, f.room)
            await expectRoomcastError(.limitExceeded) { try await f.store.create(try Self.note(), by: f.bob, in: f.room) }
            #expect(try await Self.roomFields(redis, f.room)["elementCount"] == "3")
            #expect(try await Self.roomFields(redis, f.room)["zCounter"] == "3")
            #expect(try await Self.streamLength(redis, f.room) == length)
            #expect(try await server.keys(matching: "room:{\(f.room)}:element:*").count == 3)
            // An outsider is still told forbidden, not the limit.
            await expectRoomcastError(.forbidden) { try await f.store.create(try Self.note(), by: f.eve, in: f.room) }

            try await f.store.delete(created[0].id, by: f.alice.id, in: f.room)
            let again = try await f.store.create(try Self.note(), by: f.bob, in: f.room)
            #expect(again.zIndex == 4)
            await expectRoomcastError(.limitExceeded) { try await f.store.create(try Self.note(), by: f.bob, in: f.room) }
        }
    }

    // MARK: Concurrency

    @Test("80 concurrent bring-to-front calls over 3 elements: unique zIndex, and the z-order equals replaying the events")
    func concurrentBringToFront() async throws {
        try await withTestRedis(poolSize: 4) { redis, server in
            let f = try await Self.fixture(redis)
            var built: [Element] = []
            for _ in 0..<3 { built.append(try await f.store.create(try Self.note(), by: f.alice, in: f.room)) }
            let elements = built
            let ids = elements.map(\.id)
            try await withSubscriber(server, to: [f.channel]) { inbox in
                let start = try await f.store.snapshot(of: f.room, for: f.alice.id)
                let store = f.store
                let (alice, bob, room) = (f.alice.id, f.bob.id, f.room)
                let results = try await withThrowingTaskGroup(of: (ElementID, Int).self) { group in
                    for index in 0..<80 {
                        // 40 tasks per user; neighbours hit different elements, so most calls move one.
                        let id = ids[(index / 2 + index % 2) % 3]
                        group.addTask { (id, try await store.bringToFront(id, by: index.isMultiple(of: 2) ? alice : bob, in: room)) }
                    }
                    return try await group.reduce(into: [(ElementID, Int)]()) { $0.append($1) }
                }
                #expect(results.count == 80)

                let final = try await Self.zOrder(redis, f.room)
                #expect(Set(final.map(\.z)).count == 3)
                let counter = try #require(Int(try await Self.roomFields(redis, f.room)["zCounter"] ?? ""))
                let moves = counter - 3
                #expect(moves >= 1)
                let stream = try StreamEntry.entries(try await redis.send("XRANGE", RedisKeys.roomStream(f.room), "(" + start.offset, "+"))
                #expect(stream.count == moves)

                // Exactly one event per move, in stream order, each taking the next zIndex.
                let events = try await Self.waitForEvents(inbox, moves)
                try await inbox.fence(redis, on: [f.channel])
                #expect(inbox.received.count == moves)
                #expect(events.map(\.offset) == stream.map(\.id))
                #expect(events.allSatisfy { $0.name == "element:z-index-changed" && $0.payload["roomId"].stringValue == room.rawValue })
                #expect(events.compactMap { $0.payload["zIndex"].intValue } == Array(4...counter))
                // No event moves the element already on top.
                var top = ids[2].rawValue
                for event in events {
                    let id = try #require(event.payload["elementId"].stringValue)
                    #expect(id != top, "an event for the element already on top: \(event)")
                    top = id
                }

                // Replaying the events on the snapshot gives the final z-order.
                var replay = Dictionary(uniqueKeysWithValues: start.elements.map { ($0.id.rawValue, $0.zIndex) })
                for event in events {
                    let z: Int = try #require(event.payload["zIndex"].intValue)
                    replay[try #require(event.payload["elementId"].stringValue)] = z
                }
                let replayed = replay.sorted { $0.value < $1.value }.map { (id: $0.key, z: $0.value) }
                #expect(replayed.map(\.id) == final.map(\.id))
                #expect(replayed.map(\.z) == final.map(\.z))
                #expect(try await f.store.snapshot(of: f.room, for: f.bob.id).elements.map(\.zIndex) == final.map(\.z))

                // Every call answered a zIndex its element really had: an event's, or the top's.
                let eventZs = Set(events.compactMap { $0.payload["zIndex"].intValue })
                for (id, z) in results {
                    let history = [elements.first { $0.id == id }!.zIndex]
                        + events.filter { $0.payload["elementId"].stringValue == id.rawValue }.compactMap { $0.payload["zIndex"].intValue }
                    #expect(history.contains(z), "\(id) answered \(z), history \(history)")
                }
                #expect(eventZs.count == moves)
            }
        }
    }

    @Test("50 concurrent creates by two users: zIndex 1...50, exact count, one event each")
    func concurrentCreates() async throws {
        try await withTestRedis(poolSize: 4) { redis, server in
            let f = try await Self.fixture(redis)
            try await withSubscriber(server, to: [f.channel]) { inbox in
                let store = f.store
                let (alice, bob, room) = (f.alice, f.bob, f.room)
                let draft = try Self.note()
                let created = try await withThrowingTaskGroup(of: Element.self) { group in
                    for index in 0..<50 {
                        group.addTask { try await store.create(draft, by: index.isMultiple(of: 2) ? alice : bob, in: room) }
                    }
                    return try await group.reduce(into: [Element]()) { $0.append($1) }
                }
                #expect(created.map(\.zIndex).sorted() == Array(1...50))
                #expect(Set(created.map(\.id)).count == 50)
                #expect(try await Self.roomFields(redis, f.room)["elementCount"] == "50")
                let events = try await Self.waitForEvents(inbox, 50)
                #expect(events.compactMap { $0.payload["element"]["zIndex"].intValue } == Array(1...50))
                let snapshot = try await f.store.snapshot(of: f.room, for: f.alice.id)
                #expect(snapshot.elements.map(\.zIndex) == Array(1...50))
                #expect(Set(snapshot.elements) == Set(created))
            }
        }
    }
}
