import Foundation
import RedisClient
import RoomcastTestSupport
import Testing

/// A client that does not know whether its mutation was applied (the connection dropped before
/// the ack) retries it with the same `requestId` on another node: the first result comes back and
/// nothing is applied twice.
@Suite("Idempotent retries across nodes", .serialized)
struct IdempotentRetrySocketTests {
    @Test("element:create, message:send and a heart retried on the other node after a reconnect; REST with Idempotency-Key")
    func retriesAcrossNodes() async throws {
        try await TwoNodeCluster.with { cluster in
            let alice = try await cluster.register("alice")
            let bob = try await cluster.register("bob")
            let room = try await cluster.createRoom(by: alice, with: [bob])
            let create: JSONValue = ["roomId": .string(room), "element": ElementSocketTests.note(), "requestId": "c-1"]
            let message: JSONValue = ["roomId": .string(room), "text": "once", "requestId": "m-1"]

            let first = try await cluster.connect(bob, to: cluster.node1)
            let created = try await first.emitWithAck("element:create", create)
            let elementID = try #require(created["data"]["element"]["id"].stringValue)
            let sent = try await first.emitWithAck("message:send", message)
            let heart: JSONValue = ["roomId": .string(room), "elementId": .string(elementID), "requestId": "h-1"]
            let hearted = try await first.emitWithAck("element:reaction:toggle", heart)
            #expect(hearted["data"]["action"] == "added")
            _ = try await first.close()

            let second = try await cluster.connect(bob, to: cluster.node2)
            #expect(try await second.emitWithAck("element:create", create) == created)
            #expect(try await second.emitWithAck("message:send", message) == sent)
            #expect(try await second.emitWithAck("element:reaction:toggle", heart) == hearted)
            #expect(try await ElementSocketTests.elements(cluster, room, as: alice).count == 1)
            let messages = try await cluster.withRedis { redis in try Int(redisReply: try await redis.send("XLEN", "room:{\(room)}:messages")) }
            #expect(messages == 1)
            let reactions = try await ElementSocketTests.rest("GET", "/api/rooms/\(room)/elements/\(elementID)/reactions", as: alice, on: cluster.node1)
            #expect(reactions.json["data"]["total"] == 1)

            // REST spells it Idempotency-Key.
            let body = #"{"type":"note","positionX":1,"positionY":2,"width":10,"height":10}"#
            func post(_ key: String, on node: GatewayProcess) async throws -> (status: Int, json: JSONValue) {
                let response = try await HTTPTestClient.request(
                    "POST", port: node.port, path: "/api/rooms/\(room)/elements",
                    headers: ["Content-Type": "application/json", "Authorization": "Bearer \(alice.token)", "Idempotency-Key": key],
                    body: Data(body.utf8)
                )
                return (response.status, try JSONValue(response.text))
            }
            let restFirst = try await post("rest-1", on: cluster.node1)
            let restRetry = try await post("rest-1", on: cluster.node2)
            #expect(restFirst.status == 201 && restRetry.status == 201)
            #expect(restRetry.json["data"]["id"] == restFirst.json["data"]["id"])
            #expect(try await ElementSocketTests.elements(cluster, room, as: alice).count == 2)
            let invalid = try await post("not valid!", on: cluster.node1)
            #expect(invalid.status == 400)
            #expect(invalid.json["error"]["code"] == "invalid_payload")

            // A malformed requestId on the socket is a clear error, and the connection carries on.
            let bad = try await second.emitWithAck("message:send", ["roomId": .string(room), "text": "x", "requestId": "{bad}"])
            #expect(bad["error"]["code"] == "invalid_payload")
            #expect(try await second.emitWithAck("message:send", ["roomId": .string(room), "text": "after"])["data"]["message"]["text"] == "after")
        }
    }
}
