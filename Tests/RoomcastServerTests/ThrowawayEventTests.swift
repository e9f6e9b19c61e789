import Foundation
import Logging
import NIOCore
import RedisClient
@testable import RoomcastCore
@testable import RoomcastServer
import RoomcastTestSupport
import Synchronization
import Testing

/// Adds a state-changing socket event the way CONTRIBUTING.md ("Adding a socket event") says, and
/// nothing more: a Lua function, its declaration, its change in ``RoomChanges`` and one handler.
/// The event, `test:stamp {roomId, label}`, stores the label on the room and tells the room
/// `test:stamped {roomId, label, offset}`. If adding an event ever needs more than this, the test
/// stops compiling or passing, and the guide is out of date.
///
/// The function is a small library of its own (the main library is a resource of RoomcastCore);
/// the handler goes on a gateway run in this process, through the one seam tests have
/// (``Gateway/registerExtraSocketEvents``). A second node, the built binary, knows nothing of the
/// event and still relays it: a room event is the function's, not the handler's.
@Suite("A throwaway state-changing socket event, added the documented way", .serialized)
struct ThrowawayEventTests {
    // MARK: 1. The Lua function

    /// The library: the shared helpers, then the function.
    static let library = RedisFunctionLibrary(
        name: "roomcast_throwaway",
        lua: (RoomcastLibrary.helpers.map(RoomcastLibrary.source) + [stampLua]).joined(separator: "\n")
    )

    static let stampLua = """
        -- room_stamp: stores a label on a room and emits `test:stamped`.
        --
        -- KEYS[1] room
        -- KEYS[2] participants
        -- KEYS[3] stream
        -- KEYS[4] channel
        -- ARGV[1] user
        -- ARGV[2] room_id
        -- ARGV[3] now
        -- ARGV[4] events_kept
        -- ARGV[5] label
        -- REPLY offset
        register_write('room_stamp', function(keys, args)
            local room, participants, stream, channel = unpack(keys)
            local user, room_id, now, events_kept, label = unpack(args)
            check_participant(room, participants, user)
            redis.call('HSET', room, 'stamp', label)
            touch(room, now)
            local offset = emit_to(stream, channel, events_kept, 'test:stamped',
                '"roomId":' .. quoted(room_id) .. ',"label":' .. quoted(label))
            return { 'offset', offset }
        end)
        """

    // MARK: 2. Its declaration

    struct RoomStamp: RoomFunction, UserRequested, Stamped, EmittingRoomEvents {
        static let name = "room_stamp"
        static let library = ThrowawayEventTests.library
        static let isCommittedChange = true
        static let keys: [FunctionKey<Self>] = [.room, .participants, .stream, .channel]
        static let arguments: [FunctionArgument<Self>] = [.user, .roomId, .now, .eventsKept, .init("label") { $0.label }]

        var room: RoomID
        var user: UserID
        var now: Timestamp
        var eventsKept: Int
        var label: String

        struct Reply: FunctionReply {
            enum Field: String, ReplyField { case offset }
            var offset: String

            init(_ reply: NamedReply<Field>) throws(RedisError) {
                offset = try reply.string(.offset)
            }
        }
    }

    // MARK: 3. One handler, its change and side effects in RoomChanges

    struct StampRequest: Decodable, Sendable, RoomScopedRequest {
        var roomId: RoomID
        var label: String
    }

    struct StampResult: Encodable, Sendable {
        var roomId: RoomID
        var offset: String
    }

    static func registerStamp(on router: inout SocketEventRouter) {
        router.on("test:stamp", StampRequest.self) { state, request in
            StampResult(roomId: request.roomId, offset: try await state.changes.stampRoom(request.roomId, label: request.label, by: state.connectedUser.id))
        }
    }

    // MARK: The test

    @Test("test:stamp is acknowledged with its offset, and another member on another node gets test:stamped")
    func stampOverARealSocket() async throws {
        try await TestRedis.with(mode: .selected) { redis in
            try await Self.withInProcessGateway(redis, registering: { Self.registerStamp(on: &$0) }) { port in
                let other = try await GatewayProcess(arguments: ["--redis-url", redis.url, "--log-level", "warning"])
                do {
                    let alice = try await TwoNodeCluster.register("alice", on: other)
                    let bob = try await TwoNodeCluster.register("bob", on: other)
                    let room = try await Self.createRoom(by: alice, with: bob, port: other.port)
                    let aliceSocket = try await SocketIOTestClient.connect(port: port, auth: #"{"token":"\#(alice.token)"}"#)
                    let bobSocket = try await SocketIOTestClient.connect(port: other.port, auth: #"{"token":"\#(bob.token)"}"#)
                    _ = try await ElementSocketTests.join(aliceSocket, room)
                    _ = try await ElementSocketTests.join(bobSocket, room)

                    let ack = try await aliceSocket.emitWithAck("test:stamp", ["roomId": .string(room), "label": "first \"one\""])
                    let offset = try #require(ack["data"]["offset"].stringValue, "\(ack)")
                    #expect(ack == ["data": ["roomId": .string(room), "offset": .string(offset)]])
                    let stamped = try JSONValue(try await bobSocket.nextEvent("test:stamped"))
                    #expect(stamped == ["roomId": .string(room), "label": "first \"one\"", "offset": .string(offset)])
                    #expect(try JSONValue(try await aliceSocket.nextEvent("test:stamped")) == stamped)
                    let stored = try await withClient(try redis.configuration()) { client in
                        try await client.send(RedisCommand("HGET", RedisKeys.room(RoomID(room)!), "stamp"), as: String.self)
                    }
                    #expect(stored == "first \"one\"")

                    // The function's checks answer through the ack like any event's.
                    let eve = try await TwoNodeCluster.register("eve", on: other)
                    let eveSocket = try await SocketIOTestClient.connect(port: port, auth: #"{"token":"\#(eve.token)"}"#)
                    let refused = try await eveSocket.emitWithAck("test:stamp", ["roomId": .string(room), "label": "no"])
                    #expect(refused["error"]["code"] == "forbidden", "\(refused)")
                    for socket in [aliceSocket, bobSocket, eveSocket] { _ = try? await socket.close() }
                } catch {
                    await other.process.terminate()
                    throw error
                }
                await other.stop()
            }
        }
    }

    @Test("without its handler the gateway answers test:stamp with unknown_event")
    func unknownWithoutTheHandler() async throws {
        try await TestRedis.with(mode: .selected) { redis in
            try await Self.withInProcessGateway(redis, registering: { _ in }) { port in
                let alice = try await Self.register("alice", port: port)
                let socket = try await SocketIOTestClient.connect(port: port, auth: #"{"token":"\#(alice.token)"}"#)
                let ack = try await socket.emitWithAck("test:stamp", ["roomId": "r1", "label": "x"])
                #expect(ack["error"]["code"] == "unknown_event", "\(ack)")
                _ = try? await socket.close()
            }
        }
    }

    // MARK: Support

    /// Runs a gateway in this process, on a free port, with `registering`'s extra events; stops
    /// it when `body` is done.
    static func withInProcessGateway(
        _ redis: TestRedis, registering: @escaping @Sendable (inout SocketEventRouter) -> Void, _ body: @Sendable (Int) async throws -> Void
    ) async throws {
        var settings = GatewaySettings()
        settings.port = 0
        settings.redis = try RedisConfiguration(url: redis.url)
        settings.jwtSecret = GatewayProcess.jwtSecret
        settings.bcryptCost = 4
        settings.logLevel = .warning
        var logger = Logger(label: "throwaway-event-test")
        logger.logLevel = .warning
        var gateway = Gateway(settings: settings, logger: logger)
        gateway.registerExtraSocketEvents = registering
        let node = gateway
        let ready = ReadyPort()
        let running = Task { try await node.run { line in ready.set(line) } }
        defer { running.cancel() }
        let started = try await eventually(within: .seconds(60)) { ready.port != nil }
        let port = try #require(ready.port, "the in-process gateway did not start (\(started))")
        try await body(port)
        running.cancel()
        _ = await running.result
    }

    /// The port of a gateway's ready line, once printed.
    final class ReadyPort: Sendable {
        private let line = Mutex<String?>(nil)

        func set(_ text: String) { line.withLock { $0 = text } }

        var port: Int? {
            line.withLock { text in
                text.flatMap { $0.firstMatch(of: /http:\/\/[^ ]*:(\d+)/).flatMap { Int($0.1) } }
            }
        }
    }

    static func register(_ username: String, port: Int) async throws -> TestUser {
        let response = try await HTTPTestClient.request(
            "POST", port: port, path: "/api/auth/register", headers: ["Content-Type": "application/json"],
            body: Data(#"{"username":"\#(username)","password":"correct horse"}"#.utf8)
        )
        let body = try JSONValue(response.text)
        guard let token = body["data"]["token"].stringValue, let id = body["data"]["user"]["id"].stringValue else {
            throw TestFailure("no token in \(response.text)")
        }
        return TestUser(username: username, id: id, token: token)
    }

    static func createRoom(by creator: TestUser, with other: TestUser, port: Int) async throws -> String {
        let response = try await HTTPTestClient.request(
            "POST", port: port, path: "/api/rooms",
            headers: ["Content-Type": "application/json", "Authorization": "Bearer \(creator.token)"],
            body: Data(#"{"participantIds":["\#(other.id)"]}"#.utf8)
        )
        guard let id = try JSONValue(response.text)["data"]["id"].stringValue else { throw TestFailure("no room id in \(response.text)") }
        return id
    }
}

extension RoomChanges {
    /// The throwaway event's change: its function, then its side effects (none beyond the room
    /// event its function emits; per-user events or notifications would follow here).
    func stampRoom(_ room: RoomID, label: String, by user: UserID) async throws(RoomcastError) -> String {
        try await redis.call(
            ThrowawayEventTests.RoomStamp(room: room, user: user, now: .now(), eventsKept: elements.eventsKept, label: label)
        ).offset
    }
}
