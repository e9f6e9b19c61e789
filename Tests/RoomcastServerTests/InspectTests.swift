import Foundation
import RedisClient
import RoomcastCore
import RoomcastTestSupport
import Testing

/// `roomcast inspect` against a real Redis holding a room built through the gateways' API: the
/// readers in process, then the built executable for its wiring, output and exit codes.
@Suite("roomcast inspect", .serialized)
struct InspectTests {
    /// Alice (a socket on node 1, in the room) and Bob (a socket on node 2, not in it) share a
    /// room: Alice made two notes and sent a message, Bob hearted the first note; Alice has a
    /// push device.
    struct Scene {
        let alice: TestUser
        let bob: TestUser
        let room: String
        let first: String
        let second: String
        let aliceSocket: SocketIOTestClient
        let bobSocket: SocketIOTestClient

        init(_ cluster: TwoNodeCluster) async throws {
            alice = try await cluster.register("alice")
            bob = try await cluster.register("bob")
            room = try await cluster.createRoom(by: alice, with: [bob])
            aliceSocket = try await cluster.connect(alice, to: cluster.node1)
            bobSocket = try await cluster.connect(bob, to: cluster.node2)
            _ = try await ElementSocketTests.join(aliceSocket, room)
            first = try #require(try await ElementSocketTests.create(aliceSocket, room)["id"].stringValue)
            second = try #require(try await ElementSocketTests.create(aliceSocket, room, ElementSocketTests.note(x: 50))["id"].stringValue)
            let heart = try await ElementSocketTests.rest("POST", "/api/rooms/\(room)/elements/\(first)/reactions/toggle", as: bob, on: cluster.node2)
            #expect(heart.status == 200, "\(heart.json)")
            let message = try await aliceSocket.emitWithAck("message:send", ["roomId": .string(room), "text": "hi bob"])
            #expect(message["data"].objectValue != nil, "\(message)")
            let device = try await ElementSocketTests.rest(
                "PUT", "/api/users/me/push-token", as: alice, body: #"{"token":"\#(NotificationAPI.deviceToken(7))","platform":"ios"}"#,
                on: cluster.node1
            )
            #expect(device.status == 200, "\(device.json)")
        }
    }

    /// Runs the built `roomcast inspect ...` against the cluster's Redis.
    static func inspect(_ arguments: [String], redisURL: String) async throws -> (status: Int32, output: String) {
        try await GatewayProcess.runToExit(arguments: ["inspect"] + arguments + ["--redis-url", redisURL])
    }

    @Test("room, user and nodes read back what the API built, in process and through the executable")
    func inspectBuiltRoom() async throws {
        try await TwoNodeCluster.with(environment: ["ROOMCAST_NODE_TTL_MS": "1500"]) { cluster in
            let scene = try await Scene(cluster)
            try await cluster.withRedis { redis in
                let inspector = Inspector(redis: redis)

                // The room.
                let room = try await inspector.room(try #require(RoomID(scene.room)))
                #expect(room.createdBy.rawValue == scene.alice.id)
                #expect(room.elementCount == 2)
                #expect(room.messageCount == 1)
                #expect(room.elements.map(\.id.rawValue) == [scene.first, scene.second])
                #expect(room.elements.map(\.zIndex) == room.elements.map(\.zIndex).sorted())
                #expect(room.elements.map(\.creator) == ["alice", "alice"])
                #expect(room.elements.map(\.reactionCount) == [1, 0])
                #expect(room.elements[0].reactions.map(\.username) == ["bob"])
                let participants = Dictionary(uniqueKeysWithValues: room.participants.map { ($0.username, $0) })
                #expect(participants["bob"]?.unseenElements == 2)
                #expect(participants["bob"]?.unseenMessages == 1)
                #expect(participants["bob"]?.present == false)
                #expect(participants["alice"]?.unseenElements == 0)
                #expect(participants["alice"]?.present == true)
                #expect(room.presence.isActive)
                #expect(room.presence.userIds.map(\.rawValue) == [scene.alice.id])
                #expect(room.presence.sockets == 1)
                let last = try await ElementSocketTests.lastOffset(cluster, scene.room)
                #expect(room.stream.lastOffset == last)
                #expect(room.stream.recent.first?.offset == last)
                #expect(room.stream.recent.first?.event == "message:new")
                #expect(room.stream.recent.map(\.event).contains("element:reaction:added"))
                #expect(room.stream.recent.filter { $0.event == "element:created" }.count == 2)
                #expect(room.stream.length == room.stream.recent.count)
                #expect(room.stream.firstOffset == room.stream.recent.last?.offset)

                let text = room.text
                #expect(text.hasPrefix("room \(scene.room)\n"))
                #expect(text.contains("participants (2)"))
                #expect(text.contains("elements (2, bottom first)"))
                #expect(text.contains("  messages  1\n"))
                #expect(text.contains("presence  alice (1 socket)\n"))
                let bobRow = try #require(text.split(separator: "\n").first { $0.hasPrefix("  bob ") })
                #expect(bobRow.split(separator: " ") == ["bob", Substring(scene.bob.id), "2", "1", "no"])
                let firstRow = try #require(text.split(separator: "\n").first { $0.contains(scene.first) })
                #expect(firstRow.hasSuffix("  1  bob"), "\(firstRow)")

                // The users, by username and by id.
                let alice = try await inspector.user("alice")
                #expect(alice.user.id.rawValue == scene.alice.id)
                #expect(alice.unreadNotifications == 1)
                #expect(alice.connectedSockets == 1)
                #expect(alice.devices.map(\.token) == [NotificationAPI.deviceToken(7)])
                #expect(alice.rooms.map(\.id.rawValue) == [scene.room])
                let bob = try await inspector.user(scene.bob.id)
                #expect(bob.user.username == "bob")
                #expect(bob.rooms.map(\.unseenElements) == [2])
                #expect(bob.rooms.map(\.unseenMessages) == [1])
                // Alice's new room is Bob's one notification.
                #expect(bob.unreadNotifications == 1)
                #expect(bob.devices.isEmpty)
                #expect(bob.text.contains("\ndevices (0)\n  (none)\n"))
                #expect(alice.text.contains("badge         1 unread notification\n"))
                #expect(alice.text.contains("ios       \(NotificationAPI.deviceToken(7))"))

                // The nodes.
                let nodes = try await inspector.nodes()
                #expect(Set(nodes.nodes.map(\.address)) == ["http://127.0.0.1:\(cluster.node1.port)", "http://127.0.0.1:\(cluster.node2.port)"])
                #expect(try await eventually { try await inspector.nodes().sockets == 2 })

                // Unknown ones.
                await expectNotFound { try await inspector.room(try #require(RoomID("nosuchroom"))) }
                await expectNotFound { try await inspector.user("nobody") }
            }

            // The executable: JSON for scripts.
            let json = try await Self.inspect(["room", scene.room, "--json"], redisURL: cluster.redis.url)
            #expect(json.status == 0, "\(json.output)")
            let room = try JSONValue(json.output)
            #expect(room["id"].stringValue == scene.room)
            #expect(room["elements"].arrayValue?.map { $0["id"].stringValue } == [scene.first, scene.second])
            #expect(room["elements"][0]["reactions"][0]["username"].stringValue == "bob")
            #expect(room["elements"][0]["createdAt"].stringValue?.hasSuffix("Z") == true)
            #expect(room["presence"]["isActive"].boolValue == true)
            #expect(room["stream"]["recent"][0]["event"].stringValue == "message:new")

            let user = try await Self.inspect(["user", "bob", "--json"], redisURL: cluster.redis.url)
            #expect(user.status == 0, "\(user.output)")
            #expect(try JSONValue(user.output)["rooms"][0]["unseenElements"].intValue == 2)

            let nodes = try await Self.inspect(["nodes", "--json"], redisURL: cluster.redis.url)
            #expect(nodes.status == 0, "\(nodes.output)")
            #expect(try JSONValue(nodes.output)["nodes"].arrayValue?.count == 2)

            // Text for people.
            let text = try await Self.inspect(["room", scene.room], redisURL: cluster.redis.url)
            #expect(text.status == 0, "\(text.output)")
            #expect(text.output.hasPrefix("room \(scene.room)\n"), "\(text.output)")
            #expect(text.output.contains("  Z  ID "), "\(text.output)")
            let nodesText = try await Self.inspect(["nodes"], redisURL: cluster.redis.url)
            #expect(nodesText.output.hasPrefix("nodes (2 live, 2 sockets)\n"), "\(nodesText.output)")
            #expect(nodesText.output.contains("http://127.0.0.1:\(cluster.node1.port)"))

            // Unknown room and user: status 1 and a message naming them.
            let missing = try await Self.inspect(["room", "nosuchroom"], redisURL: cluster.redis.url)
            #expect(missing.status == 1)
            #expect(missing.output == "roomcast inspect: no room with id 'nosuchroom'\n")
            let nobody = try await Self.inspect(["user", "nobody", "--json"], redisURL: cluster.redis.url)
            #expect(nobody.status == 1)
            #expect(nobody.output.contains("no user with id or username 'nobody'"))

            _ = try await scene.aliceSocket.close()
            _ = try await scene.bobSocket.close()
        }
    }

    @Test("an unreachable Redis is exit status 2 with a message naming it")
    func unreachableRedis() async throws {
        let result = try await GatewayProcess.runToExit(
            arguments: ["inspect", "nodes", "--redis-url", "redis://127.0.0.1:1"], environment: ["ROOMCAST_REDIS_COMMAND_TIMEOUT_MS": "500"]
        )
        #expect(result.status == 2)
        #expect(result.output.hasPrefix("roomcast inspect: cannot reach Redis at 127.0.0.1:1: "), "\(result.output)")
    }

    @Test("a bad setting is a usage error")
    func badSetting() async throws {
        let result = try await GatewayProcess.runToExit(arguments: ["inspect", "nodes", "--redis-url", "mysql://x"])
        #expect(result.status == 64)
        #expect(result.output.contains("redis.url"), "\(result.output)")
    }

    func expectNotFound(sourceLocation: SourceLocation = #_sourceLocation, _ body: () async throws -> some Any) async {
        do {
            _ = try await body()
            Issue.record("expected not_found", sourceLocation: sourceLocation)
        } catch let error as RoomcastError {
            #expect(error.code == .notFound, sourceLocation: sourceLocation)
        } catch {
            Issue.record("expected not_found, got \(error)", sourceLocation: sourceLocation)
        }
    }
}
