import Foundation
import RoomcastTestSupport
import Testing

@Suite("JSON logs of a node run as a process")
struct LogSecrecyTests {
    @Test("every line is JSON with socket and user ids; no password, token or secret ever appears")
    func noSecretsInLogs() async throws {
        try await TestRedis.with { redis in
            let password = "correct horse battery staple 7f3a"
            let badToken = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJtYWxsb3J5In0.c2VjcmV0LXNpZ25hdHVyZS14eXo"
            let node = try await GatewayProcess(
                arguments: ["--redis-url", redis.url, "--log-level", "trace", "--log-format", "json"],
                environment: ["ROOMCAST_PRESENCE_BACKSTOP_MS": "600"]
            )
            defer { try? FileManager.default.removeItem(atPath: node.logPath) }
            let register = try await HTTPTestClient.request(
                "POST", port: node.port, path: "/api/auth/register", headers: ["Content-Type": "application/json"],
                body: Data(#"{"username":"carol","password":"\#(password)"}"#.utf8)
            )
            #expect(register.status == 201, "\(register.text)")
            let login = try await HTTPTestClient.request(
                "POST", port: node.port, path: "/api/auth/login", headers: ["Content-Type": "application/json"],
                body: Data(#"{"username":"carol","password":"\#(password)"}"#.utf8)
            )
            let body = try JSONValue(login.text)
            let token = try #require(body["data"]["token"].stringValue)
            let userID = try #require(body["data"]["user"]["id"].stringValue)
            let wrong = try await HTTPTestClient.request(
                "POST", port: node.port, path: "/api/auth/login", headers: ["Content-Type": "application/json"],
                body: Data(#"{"username":"carol","password":"\#(password)-wrong"}"#.utf8)
            )
            #expect(wrong.status == 401)
            _ = try await HTTPTestClient.request(port: node.port, path: "/api/users/me", headers: ["Authorization": "Bearer \(badToken)"])
            _ = try await HTTPTestClient.request(port: node.port, path: "/api/users/me", headers: ["Authorization": "Bearer \(token)"])

            // A refused CONNECT (bad token in the auth object, then in the query), then a good one
            // with the token in the upgrade's header.
            await #expect(throws: SocketIOTestError.self) {
                _ = try await SocketIOTestClient.connect(port: node.port, auth: #"{"token":"\#(badToken)"}"#)
            }
            await #expect(throws: SocketIOTestError.self) {
                _ = try await SocketIOTestClient.connect(port: node.port, path: "/socket.io/?EIO=4&transport=websocket&token=\(badToken)")
            }
            let socket = try await SocketIOTestClient.connect(port: node.port, headers: ["Authorization": "Bearer \(token)"])
            let unknown = try await socket.emitWithAck("room:join", ["roomId": "no-such-room"])
            #expect(unknown["error"]["code"].stringValue != nil)
            _ = try await socket.close()

            await node.process.terminate()
            let output = node.output
            for secret in [password, token, badToken, GatewayProcess.jwtSecret, "$2b$", "$2a$", "$2y$"] {
                #expect(!output.contains(secret), "the log holds a secret: \(secret.prefix(12))…")
            }
            var objects: [[String: Any]] = []
            for line in output.split(separator: "\n") where !line.hasPrefix("roomcast ready on ") {
                let object = try #require(
                    try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "not a JSON object: \(line)"
                )
                for key in ["timestamp", "level", "label", "message"] {
                    #expect(object[key] is String, "no \(key) in \(line)")
                }
                objects.append(object)
            }
            func lines(_ message: String) -> [[String: Any]] { objects.filter { $0["message"] as? String == message } }
            let refused = lines("socket connect refused")
            #expect(refused.count == 2, "\(output)")
            #expect(refused.allSatisfy { $0["socket"] is String && $0["code"] as? String == "unauthorized" })
            let connected = try #require(lines("socket connected").first, "\(output)")
            #expect(connected["user"] as? String == userID)
            #expect(connected["socket"] as? String != nil)
            let disconnected = try #require(lines("socket disconnected").first, "\(output)")
            #expect(disconnected["user"] as? String == userID)
            #expect(disconnected["socket"] as? String == connected["socket"] as? String)
            let rejected = try #require(lines("event rejected").first, "\(output)")
            #expect(rejected["room"] as? String == "no-such-room")
            #expect(rejected["event"] as? String == "room:join")
            #expect(rejected["user"] as? String == userID)
        }
    }
}
