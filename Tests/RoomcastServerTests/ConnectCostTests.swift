import Foundation
import RedisClient
import RoomcastCore
import RoomcastTestSupport
import Testing

/// What a socket's CONNECT and disconnect ask of Redis, seen by Redis itself (`MONITOR`).
@Suite("Connect cost: one Redis round trip to connect, one to disconnect", .serialized)
struct ConnectCostTests {
    /// A presence backstop no test outlasts (the default, said here): its refresh (every third of
    /// it) would also name the user's socket count while the monitor watches.
    static let environment = ["ROOMCAST_PRESENCE_BACKSTOP_MS": "3600000"]

    /// Registers Alice and returns her with the Redis server holding her keys, the function
    /// library loaded on every server beforehand so that no reload is counted.
    private static func alice(in cluster: TwoNodeCluster) async throws -> (user: TestUser, server: RedisServer) {
        let alice = try await cluster.register("alice")
        let server = try await cluster.redis.server(servingKey: RedisKeys.user(try #require(UserID(alice.id))))
        _ = try await cluster.redis.onEveryServer { try await $0.load(RoomcastLibrary.library) }
        return (alice, server)
    }

    @Test("CONNECT is one function call (user, socket count, newest offset); the node's channel of the user's slot is subscribed once, for its first user there; a disconnect is one ZREM")
    func oneRoundTripEach() async throws {
        try await TwoNodeCluster.with(environment: Self.environment) { cluster in
            let (alice, server) = try await Self.alice(in: cluster)
            let monitor = try await CommandMonitor(port: server.port)
            defer { monitor.stop() }

            let client = try await SocketIOTestClient.connect(port: cluster.node1.port, auth: #"{"token":"\#(alice.token)"}"#)
            let connected = try await monitor.commands(naming: "{\(alice.id)}")
            try await client.close()
            #expect(try await eventually(within: .seconds(10)) { try await monitor.commands(naming: "{\(alice.id)}").count >= connected.count + 1 })

            let all = try await monitor.commands(naming: "{\(alice.id)}")
            #expect(connected == ["fcall"], "\(all)")
            #expect(Array(all.dropFirst(connected.count)) == ["zrem"], "\(all)")
            // The user's events come on the node's channel of her slot: subscribed for the node's
            // first user there, kept after she left, not subscribed again when she is back.
            #expect(try await monitor.commands(naming: #""node-events:"#) == ["ssubscribe"])
            let again = try await SocketIOTestClient.connect(port: cluster.node1.port, auth: #"{"token":"\#(alice.token)"}"#)
            #expect(try await monitor.commands(naming: "{\(alice.id)}").count == all.count + 1)
            #expect(try await monitor.commands(naming: #""node-events:"#) == ["ssubscribe"])
            try await again.close()
        }
    }

    @Test("a second socket of the same user on the same node subscribes nothing: only the function call")
    func secondSocket() async throws {
        try await TwoNodeCluster.with(environment: Self.environment) { cluster in
            let (alice, server) = try await Self.alice(in: cluster)
            let first = try await SocketIOTestClient.connect(port: cluster.node1.port, auth: #"{"token":"\#(alice.token)"}"#)
            let monitor = try await CommandMonitor(port: server.port)
            defer { monitor.stop() }
            let second = try await SocketIOTestClient.connect(port: cluster.node1.port, auth: #"{"token":"\#(alice.token)"}"#)
            #expect(try await monitor.commands(naming: "{\(alice.id)}") == ["fcall"])
            try await second.close()
            try await first.close()
        }
    }

    @Test("message:send is one function call on the sender's node; the subscribers' nodes send Redis nothing for it")
    func messageSendRoundTrips() async throws {
        try await TwoNodeCluster.with(environment: Self.environment) { cluster in
            let (alice, _) = try await Self.alice(in: cluster)
            let bob = try await cluster.register("bob")
            let room = try await cluster.createRoom(by: alice, with: [bob])
            let roomServer = try await cluster.redis.server(servingKey: RedisKeys.room(try #require(RoomID(room))))
            let aliceSocket = try await SocketIOTestClient.connect(port: cluster.node1.port, auth: #"{"token":"\#(alice.token)"}"#)
            let bobSocket = try await SocketIOTestClient.connect(port: cluster.node2.port, auth: #"{"token":"\#(bob.token)"}"#)
            _ = try await ElementSocketTests.join(aliceSocket, room)
            _ = try await ElementSocketTests.join(bobSocket, room)
            // The joins' own commands (and their per-user events) are done before the monitor starts.
            _ = try await bobSocket.nextEvent("room:presence")
            let monitor = try await CommandMonitor(port: roomServer.port)
            defer { monitor.stop() }

            let ack = try await aliceSocket.emitWithAck("message:send", ["roomId": .string(room), "text": "one round trip"])
            #expect(ack["data"]["message"]["text"] == "one round trip", "\(ack)")
            _ = try await bobSocket.nextEvent("message:new")
            #expect(try await monitor.commands(naming: "{\(room)}") == ["fcall"])
            try await aliceSocket.close()
            try await bobSocket.close()
        }
    }

    @Test("room:join is one function call (membership, catch-up, presence), with the room's SSUBSCRIBE before it; a rejoin with `since` too")
    func joinRoundTrips() async throws {
        try await TwoNodeCluster.with(environment: Self.environment) { cluster in
            let (alice, _) = try await Self.alice(in: cluster)
            let bob = try await cluster.register("bob")
            let room = try await cluster.createRoom(by: alice, with: [bob])
            let roomServer = try await cluster.redis.server(servingKey: RedisKeys.room(try #require(RoomID(room))))
            let bobSocket = try await SocketIOTestClient.connect(port: cluster.node2.port, auth: #"{"token":"\#(bob.token)"}"#)
            _ = try await ElementSocketTests.join(bobSocket, room)
            let aliceSocket = try await SocketIOTestClient.connect(port: cluster.node1.port, auth: #"{"token":"\#(alice.token)"}"#)
            let monitor = try await CommandMonitor(port: roomServer.port)
            defer { monitor.stop() }

            let offset = try #require(try await ElementSocketTests.join(aliceSocket, room)["offset"].stringValue)
            // Node 1 held no socket of the room: it subscribes first, then runs the one call.
            #expect(try await monitor.commands(naming: "{\(room)}") == ["ssubscribe", "fcall"])
            let sent = try await bobSocket.emitWithAck("message:send", ["roomId": .string(room), "text": "while away"])
            #expect(sent["data"]["message"]["text"] == "while away", "\(sent)")
            _ = try await aliceSocket.nextEvent("message:new")
            try await aliceSocket.close()
            // The message's call, then node 1's leave: its presence call and its SUNSUBSCRIBE.
            #expect(try await eventually(within: .seconds(10)) { try await monitor.commands(naming: "{\(room)}").count >= 5 })

            // Back with the offset it had before the message: one call replays it, and nothing else names the room.
            let again = try await SocketIOTestClient.connect(port: cluster.node2.port, auth: #"{"token":"\#(alice.token)"}"#)
            let before = try await monitor.commands(naming: "{\(room)}").count
            let ack = try await RecoveryTests.join(again, room, since: .string(offset))
            #expect(ack["data"]["recovered"] == true, "\(ack)")
            #expect(try JSONValue(try await again.nextEvent("message:new"))["message"]["text"] == "while away")
            #expect(Array(try await monitor.commands(naming: "{\(room)}").dropFirst(before)) == ["fcall"])
            try await again.close()
            try await bobSocket.close()
        }
    }

    @Test("a room:join refused for membership changes nothing in Redis: the node subscribes, the call refuses, the node unsubscribes")
    func refusedJoin() async throws {
        try await TwoNodeCluster.with(environment: Self.environment) { cluster in
            let (alice, _) = try await Self.alice(in: cluster)
            let bob = try await cluster.register("bob")
            let eve = try await cluster.register("eve")
            let room = try await cluster.createRoom(by: alice, with: [bob])
            let roomServer = try await cluster.redis.server(servingKey: RedisKeys.room(try #require(RoomID(room))))
            let eveSocket = try await SocketIOTestClient.connect(port: cluster.node1.port, auth: #"{"token":"\#(eve.token)"}"#)
            let monitor = try await CommandMonitor(port: roomServer.port)
            defer { monitor.stop() }

            let ack = try await eveSocket.emitWithAck("room:join", ["roomId": .string(room)])
            #expect(ack["error"]["code"] == "forbidden", "\(ack)")
            #expect(try await eventually(within: .seconds(10)) { try await monitor.commands(naming: "{\(room)}").count >= 3 })
            #expect(try await monitor.commands(naming: "{\(room)}") == ["ssubscribe", "fcall", "sunsubscribe"])
            let members = try await RedisCluster.cli(["-p", "\(roomServer.port)", "ZCARD", RedisKeys.roomPresence(try #require(RoomID(room)))])
            #expect(members.trimmingCharacters(in: .whitespacesAndNewlines) == "0", "\(members)")
            // The refused join took no place among the socket's rooms: it joins one of its own.
            let own = try await cluster.createRoom(by: eve, with: [bob])
            _ = try await ElementSocketTests.join(eveSocket, own)
            try await eveSocket.close()
        }
    }

    @Test("an idle joined socket costs Redis nothing between heartbeats: no command names its room or its user")
    func idleJoinedSocket() async throws {
        // Heartbeats every 500 ms: the window below spans several, none of which may touch a
        // member (liveness is the node's lease, not a refresh per member).
        try await TwoNodeCluster.with(environment: ["ROOMCAST_NODE_TTL_MS": "1500"]) { cluster in
            let (alice, aliceServer) = try await Self.alice(in: cluster)
            let bob = try await cluster.register("bob")
            let room = try await cluster.createRoom(by: alice, with: [bob])
            let roomServer = try await cluster.redis.server(servingKey: RedisKeys.room(try #require(RoomID(room))))
            let socket = try await SocketIOTestClient.connect(port: cluster.node1.port, auth: #"{"token":"\#(alice.token)"}"#)
            _ = try await ElementSocketTests.join(socket, room)
            let monitors = try await [CommandMonitor(port: aliceServer.port)] + (roomServer.port == aliceServer.port ? [] : [CommandMonitor(port: roomServer.port)])
            defer { monitors.forEach { $0.stop() } }
            // A quiet window: a slower machine only beats fewer times in it.
            try await Task.sleep(for: .seconds(3))
            for monitor in monitors {
                #expect(try await monitor.commands(naming: "{\(room)}").isEmpty)
                #expect(try await monitor.commands(naming: "{\(alice.id)}").isEmpty)
            }
            try await socket.close()
        }
    }
}

/// `redis-cli monitor` on one server, writing every command it runs to a file.
private final class CommandMonitor: Sendable {
    private let process: ChildProcess
    private let output: URL
    private let port: Int

    /// Starts monitoring and returns once the monitor sees commands.
    init(port: Int) async throws {
        self.port = port
        output = FileManager.default.temporaryDirectory.appendingPathComponent("roomcast-test-monitor.\(UUID().uuidString.prefix(8))")
        process = try ChildProcess(executable: try RedisCluster.cliExecutable(), arguments: ["-p", "\(port)", "monitor"], outputPath: output.path)
        try await catchUp()
    }

    /// Returns once every command Redis ran before this call is in the file: a marker sent now
    /// comes after them in the monitor's output.
    private func catchUp() async throws {
        let marker = "monitor-mark-\(UUID().uuidString.prefix(8))"
        let seen = try await eventually(within: .seconds(10)) {
            _ = try await RedisCluster.cli(["-p", "\(self.port)", "ECHO", marker])
            return self.text().contains(marker)
        }
        guard seen else { throw TestFailure("redis-cli monitor on port \(port) shows nothing") }
    }

    func stop() {
        process.signal(SIGKILL)
        try? FileManager.default.removeItem(at: output)
    }

    private func text() -> String {
        (try? String(contentsOf: output, encoding: .utf8)) ?? ""
    }

    /// The commands clients sent (not those functions ran) with an argument containing `fragment`,
    /// lowercased, in the order Redis ran them.
    func commands(naming fragment: String) async throws -> [String] {
        try await catchUp()
        // A line: `1700000000.123456 [0 127.0.0.1:5678] "FCALL" "…" "3" "user:{…}:sockets" …`.
        return text().split(whereSeparator: \.isNewline).compactMap { line -> String? in
            guard !line.contains(" lua] "), line.contains(fragment), let start = line.firstIndex(of: "]") else { return nil }
            let command = line[line.index(after: start)...].split(separator: "\"").first { !$0.trimmingCharacters(in: .whitespaces).isEmpty }
            return command.map { $0.lowercased() }
        }
    }
}
