import Foundation
import RedisClient
import RoomcastTestSupport
import Testing

/// A private Redis (one server, or a 3-master Redis Cluster under `ROOMCAST_TEST_REDIS=cluster`)
/// with two gateway nodes on it, as a deployment runs them.
struct TwoNodeCluster: Sendable {
    let redis: TestRedis
    let node1: GatewayProcess
    let node2: GatewayProcess

    /// Runs `body` with a fresh Redis and two nodes, then stops them all.
    /// - Parameters:
    ///   - mode: one server or a Redis Cluster; the run's selected mode by default.
    ///   - environment: `ROOMCAST_*` settings for both nodes.
    ///   - redisArguments: extra `redis-server` options for every server (`--appendonly yes` for
    ///     tests that restart it).
    static func with(
        mode: TestRedis.Mode = .selected,
        environment: [String: String] = [:],
        redisArguments: [String] = [],
        _ body: @Sendable (TwoNodeCluster) async throws -> Void
    ) async throws {
        try await TestRedis.with(mode: mode, arguments: redisArguments) { redis in
            let node1 = try await GatewayProcess(arguments: ["--redis-url", redis.url, "--log-level", "warning"], environment: environment)
            let node2: GatewayProcess
            do {
                node2 = try await GatewayProcess(arguments: ["--redis-url", redis.url, "--log-level", "warning"], environment: environment)
            } catch {
                await node1.process.terminate()
                throw error
            }
            let cluster = TwoNodeCluster(redis: redis, node1: node1, node2: node2)
            do {
                try await body(cluster)
            } catch {
                // The nodes' logs stay behind for whoever reads the failure.
                async let first: Void = node1.process.terminate()
                async let second: Void = node2.process.terminate()
                _ = await (first, second)
                throw error
            }
            await cluster.stop()
        }
    }

    func stop() async {
        async let first: Void = node1.stop()
        async let second: Void = node2.stop()
        _ = await (first, second)
    }

    /// Registers a user through `node` (node 1 by default) and returns its token and id.
    func register(_ username: String, on node: GatewayProcess? = nil) async throws -> TestUser {
        try await Self.register(username, on: node ?? node1)
    }

    /// Registers a user through `node`, of a cluster or a lone one, and returns its token and id.
    static func register(_ username: String, on node: GatewayProcess) async throws -> TestUser {
        let response = try await HTTPTestClient.request(
            "POST", port: node.port, path: "/api/auth/register",
            headers: ["Content-Type": "application/json"],
            body: Data(#"{"username":"\#(username)","password":"correct horse"}"#.utf8)
        )
        #expect(response.status == 201, "register \(username): \(response.text)")
        let body = try JSONValue(response.text)
        guard let token = body["data"]["token"].stringValue, let id = body["data"]["user"]["id"].stringValue else {
            throw TestFailure("no token in \(response.text)")
        }
        return TestUser(username: username, id: id, token: token)
    }

    /// Creates a room of `creator` and `others` over REST and returns its id.
    func createRoom(by creator: TestUser, with others: [TestUser], on node: GatewayProcess? = nil) async throws -> String {
        let ids = others.map { "\"\($0.id)\"" }.joined(separator: ",")
        let response = try await HTTPTestClient.request(
            "POST", port: (node ?? node1).port, path: "/api/rooms",
            headers: ["Content-Type": "application/json", "Authorization": "Bearer \(creator.token)"],
            body: Data(#"{"participantIds":[\#(ids)]}"#.utf8)
        )
        #expect(response.status == 201, "create room: \(response.text)")
        guard let id = try JSONValue(response.text)["data"]["id"].stringValue else { throw TestFailure("no room id in \(response.text)") }
        return id
    }

    /// Connects a socket for `user` to `node`, with the token in the CONNECT auth object.
    /// - Parameter compressed: the client offers permessage-deflate.
    func connect(_ user: TestUser, to node: GatewayProcess, compressed: Bool = false) async throws -> SocketIOTestClient {
        try await SocketIOTestClient.connect(port: node.port, auth: #"{"token":"\#(user.token)"}"#, compressed: compressed)
    }

    /// A client of the same Redis, for checking state and pub/sub from outside.
    func withRedis<Result: Sendable>(_ body: @Sendable (any RedisClientProtocol) async throws -> Result) async throws -> Result {
        try await withClient(try redis.configuration(), body)
    }
}

/// Alice and Bob in one room, each with a socket joined to it: Alice's on node 1, Bob's on node 2.
struct RoomPair {
    let alice: TestUser
    let bob: TestUser
    let room: String
    let aliceSocket: SocketIOTestClient
    let bobSocket: SocketIOTestClient
    /// The offset of Alice's `elements:batch`.
    let batchOffset: String

    init(_ cluster: TwoNodeCluster) async throws {
        alice = try await cluster.register("alice")
        bob = try await cluster.register("bob")
        room = try await cluster.createRoom(by: alice, with: [bob])
        bobSocket = try await cluster.connect(bob, to: cluster.node2)
        _ = try await ElementSocketTests.join(bobSocket, room)
        aliceSocket = try await cluster.connect(alice, to: cluster.node1)
        batchOffset = try #require(try await ElementSocketTests.join(aliceSocket, room)["offset"].stringValue)
    }
}

/// A registered test user.
struct TestUser: Sendable {
    let username: String
    let id: String
    let token: String
}

/// A test precondition that did not hold.
struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
