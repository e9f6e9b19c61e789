import Foundation
import RoomcastTestSupport
import Testing

/// REST rate limits (`rate.*`) on two nodes sharing one Redis: they hold across nodes, answer 429
/// with `Retry-After`, and touch nobody else. Windows are a minute long, far longer than the test.
@Suite("REST rate limits across nodes")
struct RateLimitTests {
    static func login(_ username: String, _ password: String, on node: GatewayProcess) async throws -> HTTPTestClient.Response {
        try await HTTPTestClient.request(
            "POST", port: node.port, path: "/api/auth/login", headers: ["Content-Type": "application/json"],
            body: Data(#"{"username":"\#(username)","password":"\#(password)"}"#.utf8)
        )
    }

    static func expectRateLimited(_ response: HTTPTestClient.Response) throws {
        #expect(response.status == 429, "\(response.status) \(response.text)")
        #expect(try JSONValue(response.text)["error"]["code"] == "rate_limited")
        let retryAfter = try #require(response.headers["retry-after"].flatMap(Int.init))
        #expect((1...60).contains(retryAfter))
    }

    @Test("wrong passwords for one account: 429 with Retry-After on any node once over the limit; other accounts log in")
    func loginsPerAccount() async throws {
        let environment = ["ROOMCAST_RATE_LOGINS_PER_ACCOUNT": "3", "ROOMCAST_RATE_WINDOW_MS": "60000"]
        try await TwoNodeCluster.with(environment: environment) { cluster in
            _ = try await cluster.register("alice")
            _ = try await cluster.register("bob")
            for node in [cluster.node1, cluster.node2, cluster.node1] {
                #expect(try await Self.login("alice", "wrong password", on: node).status == 401)
            }
            // The fourth attempt, on the other node: refused before the password is looked at.
            try Self.expectRateLimited(try await Self.login("alice", "wrong password", on: cluster.node2))
            try Self.expectRateLimited(try await Self.login("ALICE", "correct horse", on: cluster.node1))
            #expect(try await Self.login("bob", "correct horse", on: cluster.node2).status == 200)
        }
    }

    @Test("logins and registrations from one address are limited, whatever the account")
    func perAddress() async throws {
        let environment = ["ROOMCAST_RATE_LOGINS_PER_ADDRESS": "4"]
        try await TwoNodeCluster.with(environment: environment) { cluster in
            for index in 0..<4 {
                #expect(try await Self.login("nobody\(index)", "wrong password", on: index % 2 == 0 ? cluster.node1 : cluster.node2).status == 401)
            }
            try Self.expectRateLimited(try await Self.login("nobody9", "wrong password", on: cluster.node2))
            // Registrations count apart from logins, with the same limit.
            for index in 0..<4 { _ = try await cluster.register("carol\(index)", on: index % 2 == 0 ? cluster.node1 : cluster.node2) }
            let refused = try await HTTPTestClient.request(
                "POST", port: cluster.node1.port, path: "/api/auth/register", headers: ["Content-Type": "application/json"],
                body: Data(#"{"username":"carol9","password":"correct horse"}"#.utf8)
            )
            try Self.expectRateLimited(refused)
        }
    }

    @Test("REST changes per user: over the limit on any node is 429; reads and other users go on")
    func mutationsPerUser() async throws {
        let environment = ["ROOMCAST_RATE_REST_MUTATIONS_PER_USER": "3"]
        try await TwoNodeCluster.with(environment: environment) { cluster in
            let alice = try await cluster.register("alice")
            let bob = try await cluster.register("bob")
            var rooms: [String] = []
            for node in [cluster.node1, cluster.node2, cluster.node1] {
                let created = try await NavigationRouteTests.call("POST", "/api/rooms", as: alice, on: node, body: #"{"otherUserId":"\#(bob.id)"}"#)
                #expect(created.status == 201)
                rooms.append(try #require(created.json["data"]["id"].stringValue))
            }
            let response = try await HTTPTestClient.request(
                "POST", port: cluster.node2.port, path: "/api/rooms",
                headers: ["Content-Type": "application/json", "Authorization": "Bearer \(alice.token)"],
                body: Data(#"{"otherUserId":"\#(bob.id)"}"#.utf8)
            )
            try Self.expectRateLimited(response)
            #expect(try await NavigationRouteTests.call("GET", "/api/rooms/\(rooms[0])", as: alice, on: cluster.node2).status == 200)
            #expect(try await NavigationRouteTests.call("POST", "/api/rooms", as: bob, on: cluster.node2, body: #"{"otherUserId":"\#(alice.id)"}"#).status == 201)
        }
    }
}
