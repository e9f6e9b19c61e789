import APNs
import Foundation
import NIOCore
import PushHTTP2
import RoomcastTestSupport
import Testing

@Suite("APNsClient against a local HTTP/2 server")
struct APNsClientTests {
    let fixture = APNsTestFixture()

    @Test("a push is POST /3/device/<token> with APNs headers, the payload as body and a signed provider token")
    func requestShape() async throws {
        let payload = #"{"aps":{"alert":{"title":"Room","body":"new message"}},"room":"r1"}"#
        try await fixture.withServer(respond: { _ in .ok }) { server, client in
            var request = APNsTestFixture.request(token: "00fc13adff785122b4ad28809a3420982341241421348097878e577c991de8f0", payload: payload)
            request.pushType = "background"
            request.priority = 5
            request.expiration = 1_900_000_000
            request.collapseID = "room-r1"
            request.apnsID = "4A1B6C2D-3E4F-5061-7283-94A5B6C7D8E9"
            let before = Int(Date().timeIntervalSince1970)
            _ = try await client.send(request)
            let after = Int(Date().timeIntervalSince1970)

            let recorded = try #require(server.recordedRequests().first)
            #expect(server.recordedRequests().count == 1)
            #expect(recorded.method == "POST")
            #expect(recorded.path == "/3/device/00fc13adff785122b4ad28809a3420982341241421348097878e577c991de8f0")
            #expect(recorded.authority == "127.0.0.1:\(server.port)")
            #expect(recorded.headers["apns-topic"] == APNsTestFixture.topic)
            #expect(recorded.headers["apns-push-type"] == "background")
            #expect(recorded.headers["apns-priority"] == "5")
            #expect(recorded.headers["apns-expiration"] == "1900000000")
            #expect(recorded.headers["apns-collapse-id"] == "room-r1")
            #expect(recorded.headers["apns-id"] == "4A1B6C2D-3E4F-5061-7283-94A5B6C7D8E9")
            #expect(recorded.headers["content-type"] == "application/json")
            #expect(recorded.headers["content-length"] == String(payload.utf8.count))
            #expect(recorded.body == ByteBuffer(string: payload))

            let bearer = try #require(recorded.headers["authorization"])
            let claims = try fixture.key.verify(bearer: bearer, keyID: APNsTestFixture.keyID, teamID: APNsTestFixture.teamID)
            #expect(claims.iss == APNsTestFixture.teamID)
            #expect((before...after).contains(claims.iat))
        }
    }

    @Test("optional headers are left out when not set; defaults are alert and priority 10")
    func defaultHeaders() async throws {
        try await fixture.withServer(respond: { _ in .ok }) { server, client in
            _ = try await client.send(APNsTestFixture.request())
            let recorded = try #require(server.recordedRequests().first)
            #expect(recorded.headers["apns-push-type"] == "alert")
            #expect(recorded.headers["apns-priority"] == "10")
            #expect(recorded.headers["apns-expiration"] == nil)
            #expect(recorded.headers["apns-collapse-id"] == nil)
            #expect(recorded.headers["apns-id"] == nil)
        }
    }

    @Test("the push connection has Nagle's algorithm off and no root-only option, as getsockopt reads them back")
    func connectionSocketOptions() async throws {
        try await fixture.withServer(respond: { _ in .ok }) { server, client in
            _ = try await client.send(APNsTestFixture.request())
            #expect(try TCPSocketProbe.options(ofConnectionsTo: server.port) == [.init(noDelay: true, debug: false)])
        }
    }

    @Test("200 comes back with the apns-id APNs assigned")
    func accepted() async throws {
        try await fixture.withServer(respond: { _ in .ok }) { _, client in
            let response = try await client.send(APNsTestFixture.request())
            #expect(response.status == 200)
            #expect(response.reason == nil)
            #expect(response.timestamp == nil)
            let apnsID = try #require(response.apnsID)
            #expect(UUID(uuidString: apnsID) != nil)
        }
    }

    @Test(
        "every HTTP status is returned with the reason (and timestamp) of its body",
        arguments: [
            APNsResponse(status: 410, reason: "Unregistered", timestamp: 1_700_000_000_123),
            APNsResponse(status: 400, reason: "BadDeviceToken"),
            APNsResponse(status: 403, reason: "InvalidProviderToken"),
            APNsResponse(status: 429, reason: "TooManyRequests"),
            APNsResponse(status: 500, reason: "InternalServerError"),
            APNsResponse(status: 503, reason: "ServiceUnavailable"),
        ]
    )
    func errorStatuses(expected: APNsResponse) async throws {
        let stub = APNsStubResponse.status(expected.status, reason: expected.reason, timestamp: expected.timestamp)
        try await fixture.withServer(respond: { _ in stub }) { server, client in
            var request = APNsTestFixture.request()
            request.apnsID = "9C0A1B2C-3D4E-5F60-7182-93A4B5C6D7E8"
            let response = try await client.send(request)
            #expect(response.status == expected.status)
            #expect(response.reason == expected.reason)
            #expect(response.timestamp == expected.timestamp)
            #expect(response.apnsID == "9C0A1B2C-3D4E-5F60-7182-93A4B5C6D7E8")
            // Only an expired token is retried.
            #expect(server.recordedRequests().count == 1)
        }
    }

    @Test("one provider token serves every request")
    func tokenReused() async throws {
        try await fixture.withServer(respond: { _ in .ok }) { server, client in
            for _ in 0..<3 {
                _ = try await client.send(APNsTestFixture.request())
            }
            let bearers = server.recordedRequests().map { $0.headers["authorization"] }
            #expect(bearers.count == 3)
            #expect(Set(bearers).count == 1)
            #expect(bearers[0] != nil)
        }
    }

    @Test("403 ExpiredProviderToken renews the token and sends the push once more")
    func expiredTokenRenewed() async throws {
        let calls = CallCounter()
        let respond: @Sendable (APNsRecordedRequest) async -> APNsStubResponse = { _ in
            calls.next() == 1 ? .status(403, reason: "ExpiredProviderToken") : .ok
        }
        try await fixture.withServer(respond: respond) { server, client in
            let request = APNsTestFixture.request(token: "feed", payload: #"{"aps":{}}"#)
            let response = try await client.send(request)
            #expect(response.status == 200)
            _ = try await client.send(request)

            let recorded = server.recordedRequests()
            try #require(recorded.count == 3)
            #expect(recorded[1].path == recorded[0].path)
            #expect(recorded[1].body == recorded[0].body)
            let bearers = recorded.compactMap { $0.headers["authorization"] }
            // ES256 signatures are randomised: even a token issued in the same second differs.
            #expect(bearers[1] != bearers[0])
            #expect(bearers[2] == bearers[1])
            for bearer in bearers {
                _ = try fixture.key.verify(bearer: bearer, keyID: APNsTestFixture.keyID, teamID: APNsTestFixture.teamID)
            }
        }
    }

    @Test("a token APNs still calls expired after renewal is reported, not retried forever")
    func expiredTokenRetriedOnce() async throws {
        try await fixture.withServer(respond: { _ in .status(403, reason: "ExpiredProviderToken") }) { server, client in
            let response = try await client.send(APNsTestFixture.request())
            #expect(response.status == 403)
            #expect(response.reason == "ExpiredProviderToken")
            #expect(server.recordedRequests().count == 2)
        }
    }

    @Test("200 concurrent sends share one connection and all get their answer")
    func concurrentSends() async throws {
        try await fixture.withServer(respond: { request in
            // Answer each device differently, so that mixed-up streams would show.
            .status(request.path.hasSuffix("7") ? 410 : 200, reason: request.path.hasSuffix("7") ? "Unregistered" : nil)
        }) { server, client in
            let statuses = try await withThrowingTaskGroup(of: (Int, Int).self) { group in
                for index in 0..<200 {
                    group.addTask {
                        let response = try await client.send(APNsTestFixture.request(token: "device\(index)"))
                        return (index, response.status)
                    }
                }
                var statuses: [Int: Int] = [:]
                for try await (index, status) in group {
                    statuses[index] = status
                }
                return statuses
            }
            #expect(statuses.count == 200)
            for (index, status) in statuses {
                #expect(status == (index % 10 == 7 ? 410 : 200), "device\(index)")
            }
            #expect(server.recordedRequests().count == 200)
            #expect(server.connectionCount() == 1)
        }
    }
}
