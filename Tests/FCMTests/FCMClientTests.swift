@testable import FCM
import Foundation
import NIOCore
import PushHTTP2
import RoomcastTestSupport
import Testing

@Suite("FCMClient against a local stand-in for Google's token endpoint and FCM")
struct FCMClientTests {
    let fixture: FCMTestFixture

    init() throws {
        fixture = try FCMTestFixture()
    }

    @Test("the first send exchanges an RS256 assertion for an access token, then posts messages:send with it")
    func exchangeThenSend() async throws {
        try await fixture.withServer { server, client in
            let request = FCMTestFixture.request(token: "dXbc:APA91bHun4MxP5egoKMwt2KZFBaFUH-1RYqx")
            let before = Int(Date().timeIntervalSince1970)
            let response = try await client.send(request)
            let after = Int(Date().timeIntervalSince1970)
            #expect(response.status == 200)
            #expect(response.name?.hasPrefix("projects/\(fixture.account.projectID)/messages/") == true, "\(response)")
            #expect(!response.isUnregistered)

            // The stand-in verified the signature with the public key and every claim.
            let exchanges = server.exchanges()
            try #require(exchanges.count == 1)
            #expect(exchanges[0].failure == nil, "\(exchanges[0].failure ?? "")")
            let claims = try #require(exchanges[0].claims)
            #expect(claims.iss == fixture.account.clientEmail)
            #expect(claims.aud == server.tokenURI)
            #expect((before...after).contains(claims.iat))
            #expect(claims.exp == claims.iat + 3600)

            let recorded = server.recordedRequests()
            try #require(recorded.count == 2)
            #expect(recorded[0].path == LocalFCMServer.tokenPath)
            #expect(recorded[0].method == "POST")
            let message = try #require(server.messages().first)
            #expect(message.request.method == "POST")
            #expect(message.request.path == "/v1/projects/\(fixture.account.projectID)/messages:send")
            #expect(message.request.authority == "127.0.0.1:\(server.port)")
            #expect(message.request.headers["authorization"] == "Bearer \(exchanges[0].accessToken ?? "-")")
            #expect(message.request.headers["content-type"] == "application/json; charset=UTF-8")
            #expect(message.request.headers["content-length"] == String(request.body.readableBytes))
            #expect(message.request.body == request.body)
            #expect(message.token == "dXbc:APA91bHun4MxP5egoKMwt2KZFBaFUH-1RYqx")
            #expect(message.json["message"]["apns"]["payload"]["aps"]["badge"].intValue == 3)
        }
    }

    @Test("one access token serves every send, concurrent first sends included: one exchange")
    func tokenCached() async throws {
        try await fixture.withServer { server, client in
            try await withThrowingTaskGroup(of: Int.self) { group in
                for index in 0..<20 {
                    group.addTask { try await client.send(FCMTestFixture.request(token: "device-\(index)")).status }
                }
                for try await status in group {
                    #expect(status == 200)
                }
            }
            _ = try await client.send(FCMTestFixture.request())
            #expect(server.exchanges().count == 1)
            #expect(server.messages().count == 21)
            #expect(Set(server.messages().map(\.accessToken)).count == 1)
            #expect(server.connectionCount() == 1)
        }
    }

    @Test("the token is renewed five minutes before expires_in runs out, and not before")
    func tokenRenewedBeforeExpiry() async throws {
        let clock = ManualClock()
        try await fixture.withServer(expiresIn: 3600, now: { clock.now }) { server, client in
            _ = try await client.send(FCMTestFixture.request())
            clock.advance(by: 3600 - 300 - 1)
            _ = try await client.send(FCMTestFixture.request())
            #expect(server.exchanges().count == 1)
            clock.advance(by: 1)
            _ = try await client.send(FCMTestFixture.request())
            let exchanges = server.exchanges()
            #expect(exchanges.count == 2)
            // The new assertion is signed at the new time.
            #expect(exchanges.last?.claims?.iat == 1_750_000_000 + 3600 - 300)
            let tokens = server.messages().map(\.accessToken)
            #expect(tokens[0] == tokens[1])
            #expect(tokens[2] != tokens[1])
            #expect(tokens[2] == exchanges.last?.accessToken)
        }
    }

    @Test("a short-lived token is kept for half its life")
    func shortLifetime() async throws {
        let clock = ManualClock()
        try await fixture.withServer(expiresIn: 120, now: { clock.now }) { server, client in
            _ = try await client.send(FCMTestFixture.request())
            clock.advance(by: 59)
            _ = try await client.send(FCMTestFixture.request())
            #expect(server.exchanges().count == 1)
            clock.advance(by: 1)
            _ = try await client.send(FCMTestFixture.request())
            #expect(server.exchanges().count == 2)
        }
    }

    @Test("401 drops the access token, exchanges a new one and sends the push once more")
    func unauthorizedRenews() async throws {
        try await fixture.withServer { server, client in
            _ = try await client.send(FCMTestFixture.request())
            server.revokeAccessTokens()
            let response = try await client.send(FCMTestFixture.request(token: "after-revoke"))
            #expect(response.status == 200)
            #expect(server.unauthorizedCount() == 1)
            #expect(server.exchanges().count == 2)
            let last = try #require(server.messages().last)
            #expect(last.token == "after-revoke")
            #expect(last.accessToken == server.exchanges().last?.accessToken)
        }
    }

    @Test("a 401 that persists after renewal is returned, not retried forever")
    func unauthorizedTwice() async throws {
        let unauthorized = LocalFCMServer.fcmError(status: 401, canonical: "UNAUTHENTICATED")
        try await fixture.withServer(respond: { _ in unauthorized }) { server, client in
            let response = try await client.send(FCMTestFixture.request())
            #expect(response.status == 401)
            #expect(response.errorStatus == "UNAUTHENTICATED")
            #expect(server.messages().count == 2)
            #expect(server.exchanges().count == 2)
        }
    }

    @Test(
        "every status comes back with its canonical status and FcmError code",
        arguments: [
            FCMResponse(status: 404, errorStatus: "NOT_FOUND", errorCode: "UNREGISTERED"),
            FCMResponse(status: 400, errorStatus: "INVALID_ARGUMENT", errorCode: "UNREGISTERED"),
            FCMResponse(status: 400, errorStatus: "INVALID_ARGUMENT", errorCode: "INVALID_ARGUMENT"),
            FCMResponse(status: 403, errorStatus: "PERMISSION_DENIED", errorCode: "SENDER_ID_MISMATCH"),
            FCMResponse(status: 429, errorStatus: "RESOURCE_EXHAUSTED", errorCode: "QUOTA_EXCEEDED"),
            FCMResponse(status: 500, errorStatus: "INTERNAL", errorCode: "INTERNAL"),
            FCMResponse(status: 503, errorStatus: "UNAVAILABLE", errorCode: nil),
        ]
    )
    func errorStatuses(expected: FCMResponse) async throws {
        let stub = LocalFCMServer.fcmError(status: expected.status, canonical: expected.errorStatus ?? "", errorCode: expected.errorCode, message: "why")
        try await fixture.withServer(respond: { _ in stub }) { server, client in
            let response = try await client.send(FCMTestFixture.request())
            #expect(response.status == expected.status)
            #expect(response.errorStatus == expected.errorStatus)
            #expect(response.errorCode == expected.errorCode)
            #expect(response.message == "why")
            #expect(response.isUnregistered == (expected.status == 404 || expected.errorCode == "UNREGISTERED"))
            // Only a refused access token is retried here; the worker decides about the rest.
            #expect(server.messages().count == 1)
        }
    }

    @Test("an assertion the token endpoint refuses → authenticationFailed, and nothing is sent")
    func exchangeRefused() async throws {
        // The stand-in trusts another account's key than the one the client signs with.
        let server = try await LocalFCMServer.start(account: try FCMTestAccount.generate(), respond: LocalFCMServer.accepted)
        let client = try fixture.client(server: server)
        await #expect(throws: FCMError.authenticationFailed) {
            try await client.send(FCMTestFixture.request())
        }
        #expect(server.exchanges().count == 1)
        #expect(server.exchanges().first?.failure?.contains("signature") == true, "\(server.exchanges().first?.failure ?? "")")
        #expect(server.messages().isEmpty)
        #expect(server.unauthorizedCount() == 0)
        await client.shutdown()
        try await server.shutdown()
    }

    @Test("after shutdown, sends fail with connectionClosed")
    func shutDown() async throws {
        try await fixture.withServer { server, client in
            _ = try await client.send(FCMTestFixture.request())
            await client.shutdown()
            await #expect(throws: FCMError.connectionClosed) {
                try await client.send(FCMTestFixture.request())
            }
            #expect(server.messages().count == 1)
        }
    }
}
