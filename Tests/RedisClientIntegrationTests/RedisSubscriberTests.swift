import NIOCore
import RedisClient
import RoomcastTestSupport
import Testing

@Suite("RedisSubscriber against a real redis-server")
struct RedisSubscriberTests {
    /// Runs a subscriber and a publishing client for `body`.
    private func withSubscriber(
        _ server: RedisServer,
        _ body: @Sendable (RedisSubscriber, EventRecorder, any RedisClientProtocol) async throws -> Void
    ) async throws {
        var configuration = try testConfiguration(server)
        configuration.clientName = "subscriber"
        let recorder = EventRecorder()
        let subscriber = RedisSubscriber(configuration: configuration) { recorder.continuation.yield($0) }
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await subscriber.run() }
            defer { group.cancelAll() }
            try await withClient(try testConfiguration(server)) { publisher in
                try await body(subscriber, recorder, publisher)
            }
        }
    }

    @Test("messages published by one client reach another client's subscription, as bytes")
    func deliversAcrossClients() async throws {
        try await RedisServer.with { server in
            try await withSubscriber(server) { subscriber, recorder, publisher in
                try await subscriber.subscribe(["room:{a}", "room:{b}", "user:{c}"])
                #expect(try await publisher.send("SPUBLISH", "room:{b}", "hello") == .integer(1))
                let binary = ByteBuffer(bytes: [0, 255, 13, 10, 42])
                _ = try await publisher.send("SPUBLISH", "user:{c}", binary)
                let first = try await recorder.next { $0.message }
                #expect(first.channel == "room:{b}")
                #expect(first.payload == ByteBuffer(string: "hello"))
                let second = try await recorder.next { $0.message }
                #expect(second.channel == "user:{c}")
                #expect(second.payload == binary)

                try await subscriber.unsubscribe(["room:{b}"])
                #expect(try await publisher.send("SPUBLISH", "room:{b}", "gone") == .integer(0))
                #expect(try await publisher.send("PUBSUB", "SHARDNUMSUB", "room:{a}", "room:{b}")
                    == .array([.bulk(ByteBuffer(string: "room:{a}")), .integer(1), .bulk(ByteBuffer(string: "room:{b}")), .integer(0)]))
                #expect(subscriber.channels == ["room:{a}", "user:{c}"])
            }
        }
    }

    @Test("after CLIENT KILL the subscriber resubscribes by itself and tells its owner")
    func resubscribesAfterKill() async throws {
        try await RedisServer.with { server in
            try await withSubscriber(server) { subscriber, recorder, publisher in
                try await subscriber.subscribe(["room:{x}", "room:{y}"])
                _ = try await publisher.send("CLIENT", "KILL", "TYPE", "pubsub")
                _ = try await recorder.next { $0.isConnectionLost ? true : nil }
                let restored = try await recorder.next { $0.restoredChannels }
                #expect(Set(restored) == ["room:{x}", "room:{y}"])
                #expect(try await publisher.send("SPUBLISH", "room:{y}", "after") == .integer(1))
                #expect(try await recorder.next { $0.message }.payload == ByteBuffer(string: "after"))
            }
        }
    }

    @Test("after a Redis restart subscriptions come back and the owner is told")
    func resubscribesAfterRestart() async throws {
        try await RedisServer.with { server in
            try await withSubscriber(server) { subscriber, recorder, publisher in
                try await subscriber.subscribe(["room:{r}"])
                try await server.restart()
                _ = try await recorder.next { $0.isConnectionLost ? true : nil }
                #expect(try await recorder.next { $0.restoredChannels } == ["room:{r}"])
                #expect(try await eventually { (try? await publisher.send("SPUBLISH", "room:{r}", "back")) == .integer(1) })
                #expect(try await recorder.next { $0.message }.payload == ByteBuffer(string: "back"))
            }
        }
    }

    @Test("a silently dead link is found by the health check")
    func healthCheckFindsDeadLink() async throws {
        try await RedisServer.with { server in
            try await withSubscriber(server) { subscriber, recorder, publisher in
                try await subscriber.subscribe(["room:{h}"])
                // Redis stops answering for 4 s: the PING health check (every 0.5 s, 0.5 s to
                // answer) gives up, even on a loaded machine that runs it seconds late.
                async let pause = publisher.send(RedisCommand("CLIENT", "PAUSE", "4000", "ALL"), timeout: .seconds(5))
                _ = try await pause
                _ = try await recorder.next { $0.isConnectionLost ? true : nil }
                #expect(try await recorder.next { $0.restoredChannels } == ["room:{h}"])
            }
        }
    }

    @Test("subscribing while Redis is down waits, then succeeds once it is back")
    func subscribeWhileDown() async throws {
        try await RedisServer.with { server in
            try await withSubscriber(server) { subscriber, recorder, publisher in
                try await subscriber.subscribe(["room:{first}"])
                await server.stop()
                _ = try await recorder.next { $0.isConnectionLost ? true : nil }
                async let subscribed: Void = subscriber.subscribe(["room:{later}"], timeout: .seconds(30))
                try await Task.sleep(for: .milliseconds(200))
                try await server.start()
                try await subscribed
                #expect(try await eventually { (try? await publisher.send("SPUBLISH", "room:{later}", "x")) == .integer(1) })
            }
        }
    }
}
