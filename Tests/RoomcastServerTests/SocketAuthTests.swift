import Foundation
@testable import RoomcastServer
import RoomcastCore
import RoomcastTestSupport
import SocketIO
import Testing

@Suite("Socket.IO connect: tokens, namespaces, Engine.IO", .serialized)
struct SocketAuthTests {
    private func refusal(_ cluster: TwoNodeCluster, auth: String?, path: String = SocketIOTestClient.defaultPath, headers: [String: String] = [:]) async throws -> (message: String, code: String?) {
        do {
            let client = try await SocketIOTestClient.connect(port: cluster.node1.port, path: path, headers: headers, auth: auth)
            _ = try? await client.close()
            throw TestFailure("the connection was accepted")
        } catch SocketIOTestError.connectError(let message, let code) {
            return (message, code)
        }
    }

    @Test("expired, tampered, alg:none, foreign-key and missing tokens are refused with CONNECT_ERROR")
    func badTokens() async throws {
        try await TwoNodeCluster.with { cluster in
            let alice = try await cluster.register("alice")
            let userID = try #require(UserID(alice.id))
            let tokens = TokenService(secret: GatewayProcess.jwtSecret, lifetime: .seconds(60))
            let expired = try await tokens.issue(for: userID, now: Date().addingTimeInterval(-3600))
            #expect(try await refusal(cluster, auth: #"{"token":"\#(expired)"}"#).code == "token_expired")

            var parts = alice.token.split(separator: ".").map(String.init)
            parts[2] = String(parts[2].reversed())
            #expect(try await refusal(cluster, auth: #"{"token":"\#(parts.joined(separator: "."))"}"#).code == "unauthorized")

            let header = Data(#"{"alg":"none","typ":"JWT"}"#.utf8).base64URL
            let payload = Data(#"{"sub":"\#(alice.id)","exp":\#(Int(Date().timeIntervalSince1970) + 3600)}"#.utf8).base64URL
            #expect(try await refusal(cluster, auth: #"{"token":"\#(header).\#(payload)."}"#).code == "unauthorized")

            let foreign = try await TokenService(secret: String(repeating: "k", count: 40), lifetime: .seconds(60)).issue(for: userID)
            #expect(try await refusal(cluster, auth: #"{"token":"\#(foreign)"}"#).code == "unauthorized")

            let none = try await refusal(cluster, auth: nil)
            #expect(none.code == "unauthorized")
            #expect(none.message.contains("token"))
            #expect(try await refusal(cluster, auth: #"{"token":"garbage"}"#).code == "unauthorized")
        }
    }

    @Test("the token may come from the Authorization header or the token query parameter")
    func tokenSources() async throws {
        try await TwoNodeCluster.with { cluster in
            let alice = try await cluster.register("alice")
            let viaHeader = try await SocketIOTestClient.connect(port: cluster.node1.port, headers: ["Authorization": "Bearer \(alice.token)"])
            #expect(await viaHeader.socketId != nil)
            let viaQuery = try await SocketIOTestClient.connect(port: cluster.node2.port, path: SocketIOTestClient.defaultPath + "&token=\(alice.token)")
            #expect(await viaQuery.socketId != nil)
            // The auth object wins over the header.
            #expect(try await refusal(cluster, auth: #"{"token":"garbage"}"#, headers: ["Authorization": "Bearer \(alice.token)"]).code == "unauthorized")
            // A token JSON-escaped in the auth object is the same token.
            let escaped = #"\u00"# + String(alice.token.utf8.first!, radix: 16) + alice.token.dropFirst()
            let viaEscapes = try await SocketIOTestClient.connect(port: cluster.node1.port, auth: #"{"token":"\#(escaped)"}"#)
            #expect(await viaEscapes.socketId != nil)
            // An auth object without a string token does not name one: the header's counts.
            for auth in [#"{"token":5}"#, #"{"token":null}"#, #"{"token":{"jwt":"x"}}"#] {
                let client = try await SocketIOTestClient.connect(port: cluster.node2.port, headers: ["Authorization": "Bearer \(alice.token)"], auth: auth)
                #expect(await client.socketId != nil, "\(auth)")
            }
            // One that names it twice is no object a signed token may come in.
            #expect(try await refusal(cluster, auth: #"{"token":"garbage","token":"\#(alice.token)"}"#).code == "unauthorized")
        }
    }

    @Test("other namespaces are refused; the Socket-IO-Client-Swift CONNECT form works")
    func namespaces() async throws {
        try await TwoNodeCluster.with { cluster in
            let alice = try await cluster.register("alice")
            do {
                _ = try await SocketIOTestClient.connect(port: cluster.node1.port, auth: #"{"token":"\#(alice.token)"}"#, namespace: "/admin")
                Issue.record("namespace /admin should be refused")
            } catch SocketIOTestError.connectError(let message, let code) {
                // Exactly the reference server's refusal: no `data`.
                #expect(message == "Invalid namespace")
                #expect(code == nil)
            }
            let client = try await SocketIOTestClient.open(port: cluster.node1.port)
            try await client.sendRaw(text: #"40/,{"token":"\#(alice.token)"}"#)
            #expect(try await client.nextConnectReply().isEmpty == false)
        }
    }

    @Test("the open packet carries the configured timings; unanswered pings and a missing CONNECT close the socket")
    func engineIOTimings() async throws {
        let environment = [
            "ROOMCAST_ENGINEIO_PING_INTERVAL_MS": "200", "ROOMCAST_ENGINEIO_PING_TIMEOUT_MS": "300",
            "ROOMCAST_ENGINEIO_CONNECT_TIMEOUT_MS": "500",
        ]
        try await TwoNodeCluster.with(environment: environment) { cluster in
            let alice = try await cluster.register("alice")
            let quiet = try await SocketIOTestClient.connect(port: cluster.node1.port, auth: #"{"token":"\#(alice.token)"}"#, autoPong: false)
            #expect(quiet.handshake.pingInterval == 200)
            #expect(quiet.handshake.pingTimeout == 300)
            #expect(quiet.handshake.upgrades.isEmpty)
            try await quiet.nextPing(timeout: .seconds(5))
            _ = try await quiet.waitForClose(timeout: .seconds(5))

            // A client that answers keeps getting pings and stays open, however slowly this
            // machine runs (the cadence itself: EngineIOHeartbeatTests, and measured on the wire
            // in tests/e2e/test_reference_protocol.py).
            let lively = try await SocketIOTestClient.connect(port: cluster.node1.port, auth: #"{"token":"\#(alice.token)"}"#)
            for _ in 0..<3 { try await lively.nextPing(timeout: .seconds(30)) }
            #expect(await !lively.isClosed)

            let silent = try await SocketIOTestClient.open(port: cluster.node1.port)
            _ = try await silent.waitForClose(timeout: .seconds(5))
        }
    }

    @Test("other Engine.IO versions and transports are refused with the reference error bodies")
    func engineIORefusals() async throws {
        try await TwoNodeCluster.with { cluster in
            let old = try await HTTPTestClient.request(port: cluster.node1.port, path: "/socket.io/?EIO=3&transport=websocket")
            #expect(old.status == 400)
            #expect(try JSONValue(old.text) == ["code": 5, "message": "Unsupported protocol version"])
            let unknown = try await HTTPTestClient.request(port: cluster.node1.port, path: "/socket.io/?EIO=4&transport=flash")
            #expect(unknown.status == 400)
            #expect(try JSONValue(unknown.text) == ["code": 0, "message": "Transport unknown"])
            let oldPolling = try await HTTPTestClient.request(port: cluster.node1.port, path: "/socket.io/?EIO=3&transport=polling")
            #expect(oldPolling.status == 400)
            #expect(try JSONValue(oldPolling.text)["code"] == 5)
            // Long-polling is served: its handshake is the open packet, offering the upgrade.
            let polling = try await HTTPTestClient.request(port: cluster.node1.port, path: "/socket.io/?EIO=4&transport=polling")
            #expect(polling.status == 200)
            #expect(polling.text.hasPrefix("0{") && polling.text.contains(#""upgrades":["websocket"]"#))
        }
    }
}

extension Data {
    /// Base64url without padding, as JWTs use.
    fileprivate var base64URL: String {
        base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }
}
