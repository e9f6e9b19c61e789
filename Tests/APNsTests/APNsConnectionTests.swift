@testable import APNs
import NIOCore
import PushHTTP2
import RoomcastTestSupport
import Testing

@Suite("APNsClient when the connection fails")
struct APNsConnectionTests {
    let fixture = APNsTestFixture()

    /// A `respond` that never answers on its own; the server's shutdown cancels it.
    static let hang: @Sendable (APNsRecordedRequest) async -> APNsStubResponse = { _ in
        try? await Task.sleep(for: .seconds(120))
        return .ok
    }

    @Test("nothing listening → connectionFailed")
    func nothingListening() async throws {
        // A port bound but not listening: refused, and no other test can take it meanwhile.
        let reserved = try ReservedPort()
        defer { reserved.release() }
        let client = try fixture.client(url: "http://127.0.0.1:\(reserved.port)")
        await #expect(throws: APNsError.connectionFailed) {
            try await client.send(APNsTestFixture.request())
        }
        await client.shutdown()
    }

    @Test("an https endpoint that does not speak TLS → connectionFailed")
    func tlsHandshakeFails() async throws {
        try await fixture.withServer(respond: { _ in .ok }) { server, _ in
            let client = try fixture.client(url: "https://127.0.0.1:\(server.port)")
            await #expect(throws: APNsError.connectionFailed) {
                try await client.send(APNsTestFixture.request())
            }
            await client.shutdown()
            #expect(server.recordedRequests().isEmpty)
        }
    }

    @Test("a server that does not answer → timeout within requestTimeout; the connection stays usable")
    func timeout() async throws {
        // Long enough that the follow-up send gets its answer in time on a busy machine.
        try await fixture.withServer(requestTimeout: .seconds(2), respond: { request in
            request.path.hasSuffix("/hang") ? await Self.hang(request) : .ok
        }) { server, client in
            let clock = ContinuousClock()
            let start = clock.now
            await #expect(throws: APNsError.timeout) {
                try await client.send(APNsTestFixture.request(token: "hang"))
            }
            // Not before the timeout; and by it, not by the stub's answer two minutes on, or the
            // send would have succeeded.
            #expect(clock.now - start >= .seconds(2))

            // On a loaded machine one follow-up may time out too; the same connection answers.
            var status: Int?
            for _ in 0..<3 where status == nil {
                status = try? await client.send(APNsTestFixture.request()).status
            }
            #expect(status == 200)
            #expect(server.connectionCount() == 1)
        }
    }

    @Test("the connection dying under in-flight sends → connectionClosed")
    func connectionLost() async throws {
        let (arrivals, arrived) = AsyncStream.makeStream(of: Void.self)
        let server = try await LocalAPNsServer.start { request in
            arrived.yield()
            return await Self.hang(request)
        }
        // A deadline far beyond the test: on a loaded machine the sends may take seconds to arrive,
        // and only the connection's end may answer them.
        let client = try fixture.client(url: server.url, requestTimeout: .seconds(60))
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<3 {
                group.addTask {
                    await #expect(throws: APNsError.connectionClosed) {
                        try await client.send(APNsTestFixture.request(token: "device\(index)"))
                    }
                }
            }
            var arrivalCount = 0
            for await _ in arrivals {
                arrivalCount += 1
                if arrivalCount == 3 { break }
            }
            try await server.shutdown()
            try await group.waitForAll()
        }
        await client.shutdown()
    }

    @Test("a server restarted on the same port → the next send reconnects")
    func reconnects() async throws {
        // Below the ephemeral range, so no other test's server or client takes the port while it is free.
        let first = try await LocalAPNsServer.startBelowEphemeralPorts { _ in .ok }
        let client = try fixture.client(url: first.url)
        #expect(try await client.send(APNsTestFixture.request()).status == 200)

        let connection = try #require(await client.currentConnection)
        try await first.shutdown()
        // Wait until the client has seen its connection close, so the next send must reconnect.
        try await connection.closeFuture.get()

        let second = try await LocalAPNsServer.restart(port: first.port) { _ in .status(410, reason: "Unregistered") }
        let response = try await client.send(APNsTestFixture.request())
        #expect(response.status == 410)
        #expect(second.recordedRequests().count == 1)
        #expect(second.connectionCount() == 1)
        await client.shutdown()
        try await second.shutdown()
    }

    @Test("GOAWAY → the answer still arrives, and the next send opens a new connection")
    func goAway() async throws {
        let calls = CallCounter()
        try await fixture.withServer(respond: { _ in
            calls.next() == 1 ? APNsStubResponse(status: 200, goAway: true) : .ok
        }) { server, client in
            let first = try await client.send(APNsTestFixture.request())
            #expect(first.status == 200)
            let second = try await client.send(APNsTestFixture.request())
            #expect(second.status == 200)
            #expect(server.connectionCount() == 2)
        }
    }

    @Test("after shutdown, sends fail with connectionClosed")
    func shutDown() async throws {
        try await fixture.withServer(respond: { _ in .ok }) { server, client in
            let response = try await client.send(APNsTestFixture.request())
            #expect(response.status == 200)
            await client.shutdown()
            await #expect(throws: APNsError.connectionClosed) {
                try await client.send(APNsTestFixture.request())
            }
            #expect(server.recordedRequests().count == 1)
        }
    }
}
