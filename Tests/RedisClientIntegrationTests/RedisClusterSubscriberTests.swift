import NIOCore
import RedisClient
import RoomcastTestSupport
import Testing

@Suite("RedisSubscriber against a 3-master Redis Cluster", .serialized)
struct RedisClusterSubscriberTests {
    private func withSubscriber(
        _ cluster: RedisCluster,
        _ body: @Sendable (RedisSubscriber, EventRecorder, any RedisClientProtocol) async throws -> Void
    ) async throws {
        let recorder = EventRecorder()
        let subscriber = RedisSubscriber(configuration: try cluster.configuration()) { recorder.continuation.yield($0) }
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await subscriber.run() }
            defer { group.cancelAll() }
            try await cluster.withClusterClient { publisher in
                try await body(subscriber, recorder, publisher)
            }
        }
    }

    private static let channels = (0..<12).map { "room:{c\($0)}:events" }

    @Test("sharded channels on every shard: SPUBLISH reaches the subscriber, PUBSUB SHARDCHANNELS lists them per shard")
    func shardedAcrossShards() async throws {
        try await RedisCluster.with { cluster in
            try await withSubscriber(cluster) { subscriber, recorder, publisher in
                try await subscriber.subscribe(Self.channels)
                var listed: Set<String> = []
                var shards = 0
                for port in cluster.ports {
                    let text = try await cluster.ask(port, "PUBSUB", "SHARDCHANNELS")
                    let names = text.split(separator: "\n").map(String.init).filter { !$0.isEmpty }
                    if !names.isEmpty { shards += 1 }
                    for name in names {
                        #expect(try await cluster.port(servingKey: name) == port)
                    }
                    listed.formUnion(names)
                }
                #expect(listed == Set(Self.channels))
                #expect(shards == 3)
                for channel in Self.channels {
                    #expect(try await publisher.send("SPUBLISH", channel, "to \(channel)") == .integer(1))
                }
                var received: Set<String> = []
                for _ in Self.channels {
                    let message = try await recorder.next { $0.message }
                    #expect(String(buffer: message.payload) == "to \(message.channel)")
                    received.insert(message.channel)
                }
                #expect(received == Set(Self.channels))

                try await subscriber.unsubscribe([Self.channels[0]])
                #expect(try await publisher.send("SPUBLISH", Self.channels[0], "gone") == .integer(0))
            }
        }
    }

    @Test("a killed shard connection: connectionLost, then that shard's channels (only) restored")
    func resubscribesAfterKill() async throws {
        try await RedisCluster.with { cluster in
            try await withSubscriber(cluster) { subscriber, recorder, publisher in
                try await subscriber.subscribe(Self.channels)
                var killed: Set<String> = []
                for channel in Self.channels where try await cluster.port(servingKey: channel) == cluster.ports[1] {
                    killed.insert(channel)
                }
                _ = try await cluster.ask(cluster.ports[1], "CLIENT", "KILL", "TYPE", "pubsub")
                _ = try await recorder.next { $0.isConnectionLost ? true : nil }
                let restored = try await recorder.next { $0.restoredChannels }
                #expect(Set(restored) == killed)
                // On a loaded machine a health-check PING (500 ms here) may time out and start
                // the subscriber over once more, so a publish right after `restored` can find
                // nobody: publish until one subscriber gets it. A publish that reached nobody
                // delivers nothing, so each channel still yields one message.
                for channel in Self.channels {
                    #expect(try await eventually { try await publisher.send("SPUBLISH", channel, "after") == .integer(1) })
                }
                var received: Set<String> = []
                while received.count < Self.channels.count {
                    let message = try await recorder.next { $0.message }
                    #expect(message.payload == ByteBuffer(string: "after"))
                    #expect(received.insert(message.channel).inserted, "\(message.channel) twice")
                }
            }
        }
    }

    @Test("after a reshard moves a channel's slot, the subscriber follows it")
    func followsReshard() async throws {
        try await RedisCluster.with { cluster in
            try await withSubscriber(cluster) { subscriber, recorder, publisher in
                try await subscriber.subscribe(Self.channels)
                var onSource: Set<String> = []
                for channel in Self.channels where try await cluster.port(servingKey: channel) == cluster.ports[0] {
                    onSource.insert(channel)
                }
                // Slots 0-1999 leave the first master (it keeps the rest: a master left with
                // none would turn into a replica); room:{c10}, {c2} and {c6} live there.
                try await cluster.reshard(fromPort: cluster.ports[0], toPort: cluster.ports[2], slots: 2000)
                _ = try await recorder.next { $0.isConnectionLost ? true : nil }
                // Only the source master's link starts over: the other shards' channels are
                // never lost, so never restored.
                let restored = Set(try await recorder.next { $0.restoredChannels })
                #expect(!restored.isEmpty && restored.isSubset(of: onSource), "\(restored) not within \(onSource)")
                // Each slot leaving a master unsubscribes its channels there, so the subscriber may
                // start over more than once while the reshard runs: wait until it has settled.
                for channel in Self.channels {
                    #expect(try await eventually { try await publisher.send("SPUBLISH", channel, "moved") == .integer(1) })
                }
                var received: Set<String> = []
                while received.count < Self.channels.count {
                    let message = try await recorder.next { $0.message }
                    #expect(message.payload == ByteBuffer(string: "moved"))
                    received.insert(message.channel)
                }
                for port in cluster.ports {
                    let listed = try await cluster.ask(port, "PUBSUB", "SHARDCHANNELS").split(separator: "\n")
                    for channel in listed {
                        #expect(try await cluster.port(servingKey: String(channel)) == port)
                    }
                }
            }
        }
    }

    @Test("a master emptied by a reshard turns replica: publisher and subscriber both end up on the new owner")
    func followsDrainedMaster() async throws {
        try await RedisCluster.with { cluster in
            try await withSubscriber(cluster) { subscriber, recorder, publisher in
                try await subscriber.subscribe(Self.channels)
                try await cluster.reshard(fromPort: cluster.ports[0], toPort: cluster.ports[2], slots: 5461)
                // The old master, now a replica, serves SPUBLISH for its former slots itself rather
                // than answering MOVED, until the publisher's periodic map refresh; it passes the
                // message on to its shard but counts only its own subscribers (0). A publish in
                // flight on a connection the role change closes fails with `connectionClosed`:
                // the client cannot know whether Redis ran it, so it does not send a command that
                // is not idempotent again (the gateway answers `unavailable`); this test does.
                for channel in Self.channels {
                    #expect(try await eventually(within: .seconds(30)) {
                        do {
                            return try await publisher.send("SPUBLISH", channel, "drained") == .integer(1)
                        } catch let error as RedisError where error.code == .connectionClosed {
                            return false
                        }
                    })
                }
                var received: Set<String> = []
                while received.count < Self.channels.count {
                    received.insert(try await recorder.next { $0.message }.channel)
                }
            }
        }
    }
}
