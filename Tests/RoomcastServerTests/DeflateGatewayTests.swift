import RoomcastTestSupport
import Testing

@Suite("permessage-deflate through the gateway", .serialized)
struct DeflateGatewayTests {
    @Test("clients that offer permessage-deflate exchange long messages both ways across nodes, compressed over the threshold")
    func compressedChat() async throws {
        try await TwoNodeCluster.with { cluster in
            let alice = try await cluster.register("alice")
            let bob = try await cluster.register("bob")
            let carol = try await cluster.register("carol")
            let room = try await cluster.createRoom(by: alice, with: [bob, carol])
            // swift-websocket's client extension: it compresses what it sends from 256 bytes and
            // fails the connection on a compressed frame it cannot read.
            let aliceSocket = try await cluster.connect(alice, to: cluster.node1, compressed: true)
            let bobSocket = try await cluster.connect(bob, to: cluster.node2, compressed: true)
            // A client without the extension in the same fan-out gets the plain frame.
            let carolSocket = try await cluster.connect(carol, to: cluster.node2)
            for socket in [aliceSocket, bobSocket, carolSocket] {
                _ = try await socket.emitWithAck("room:join", ["roomId": .string(room)])
            }
            // Over the 1024-byte threshold: the event goes out compressed.
            let long = String(repeating: "compress me, ", count: 400)
            let ack = try await aliceSocket.emitWithAck("message:send", ["roomId": .string(room), "text": .string(long)])
            #expect(ack["data"]["message"]["text"].stringValue == long)
            for socket in [bobSocket, carolSocket, aliceSocket] {
                #expect(try JSONValue(try await socket.nextEvent("message:new"))["message"]["text"].stringValue == long)
            }
            _ = try await bobSocket.emitWithAck("message:send", ["roomId": .string(room), "text": "short"])
            #expect(try JSONValue(try await aliceSocket.nextEvent("message:new"))["message"]["text"] == "short")
        }
    }
}
