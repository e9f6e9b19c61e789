import NIOCore
import RedisClient
import RoomcastTestSupport
import Synchronization
import Testing

/// A Redis Cluster of 3 masters + 3 replicas: one master is SIGKILLed and its replica promoted.
/// Only that master's slots may notice: the subscriber's other links keep delivering with no lost
/// or restored event for their channels, commands for the other masters are answered, a command
/// for the dead one fails at once (not at its 30 s timeout), and after the promotion the dead
/// master's channels, and only they, are restored (what a node's gap repair covers).
///
/// In ``onlyTheDeadShard()`` replicas start with `cluster-replica-no-failover yes`: the test
/// promotes the replica when the checks on a master down and not replaced are done, however slow
/// the machine is, by turning it off (`cluster-replica-validity-factor 0`, so a replica whose
/// master died long ago still may). In ``automaticFailover()`` the cluster promotes it by itself.
@Suite("One master of a Redis Cluster with replicas killed: only its slots are touched", .serialized)
struct ShardFailoverTests {
    private static let channels = (0..<12).map { "room:{f\($0)}:events" }

    @Test("the other shards' channels keep delivering, their commands are answered, the dead shard's channels alone are restored after the promotion")
    func onlyTheDeadShard() async throws {
        try await RedisCluster.with(replicasPerMaster: 1) { cluster in
            for replica in cluster.replicas {
                _ = try await cluster.cli(port: replica.port, ["CONFIG", "SET", "cluster-replica-no-failover", "yes"])
                _ = try await cluster.cli(port: replica.port, ["CONFIG", "SET", "cluster-replica-validity-factor", "0"])
            }
            // The kill closes the dead master's links at once; a health-check PING that a loaded
            // machine answers late must not restart a healthy link (its channels would be
            // restored), so it is given seconds.
            var configuration = try testConfiguration(url: cluster.url, poolSize: 1)
            configuration.healthCheckInterval = .seconds(10)
            // The client's commands wait an hour: one for the dead master that waited for an
            // answer, not failing at once, would outlast `finishing`'s patience by far.
            var commands = configuration
            commands.commandTimeout = .seconds(3_600)
            let recorder = EventRecorder()
            let subscriber = RedisSubscriber(configuration: configuration) { recorder.record($0) }
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { await subscriber.run() }
                defer { group.cancelAll() }
                try await withClient(commands) { client in
                    try await subscriber.subscribe(Self.channels)
                    let victim = cluster.servers[0]
                    var onVictim: Set<String> = []
                    for channel in Self.channels where try await cluster.port(servingKey: channel) == victim.port {
                        onVictim.insert(channel)
                    }
                    let healthy = Set(Self.channels).subtracting(onVictim)
                    try #require(!onVictim.isEmpty && !healthy.isEmpty)
                    // Every master has served the client once.
                    for channel in Self.channels {
                        #expect(try await client.send("SET", channel + ":key", "before") == .status("OK"))
                    }

                    await victim.kill()
                    _ = try await recorder.next { $0.isConnectionLost ? true : nil }

                    // (a) Published on the healthy shards while the dead master is not replaced:
                    // heard, each by one subscriber.
                    for channel in healthy.sorted() {
                        #expect(try await client.send("SPUBLISH", channel, "during") == .integer(1), "\(channel)")
                    }
                    var heard: Set<String> = []
                    while heard.count < healthy.count {
                        let message = try await recorder.next { $0.message }
                        #expect(healthy.contains(message.channel) && message.payload == ByteBuffer(string: "during"))
                        heard.insert(message.channel)
                    }

                    // (b) Commands for the healthy masters are answered; one for the dead master
                    // fails at once, not at its timeout.
                    for channel in healthy.sorted() {
                        #expect(try await client.send("SET", channel + ":key", "during") == .status("OK"))
                    }
                    let deadKey = try #require(onVictim.first) + ":key"
                    let failed = try await finishing("a command for the dead master") {
                        do {
                            _ = try await client.send("SET", deadKey, "during")
                            return false
                        } catch is RedisError {
                            return true
                        }
                    }
                    #expect(failed, "a command for the dead master was answered")

                    // (c) The replica takes over: the dead master's channels come back, restored.
                    for replica in cluster.replicas {
                        _ = try? await cluster.cli(port: replica.port, ["CONFIG", "SET", "cluster-replica-no-failover", "no"])
                    }
                    var restored: Set<String> = []
                    while !onVictim.isSubset(of: restored) {
                        restored.formUnion(try await recorder.next(within: .seconds(60)) { $0.restoredChannels })
                    }
                    for channel in onVictim.sorted() {
                        #expect(try await eventually(within: .seconds(60)) { (try? await client.send("SPUBLISH", channel, "after")) == .integer(1) }, "\(channel)")
                    }
                    var back: Set<String> = []
                    while back.count < onVictim.count {
                        let message = try await recorder.next { $0.message }
                        if message.payload == ByteBuffer(string: "after") { back.insert(message.channel) }
                    }
                    #expect(back == onVictim)

                    // No event ever named a healthy channel: their link was never lost, so no gap
                    // repair for them.
                    for event in recorder.history {
                        let named = Set(event.restoredChannels ?? event.lostChannels ?? [])
                        #expect(named.isDisjoint(with: healthy), "\(event)")
                    }
                }
            }
        }
    }

    @Test("the cluster promotes the replica by itself, every master refusing meanwhile (Redis's default cluster-require-full-coverage): commands for the healthy masters wait that moment out and are all answered")
    func automaticFailover() async throws {
        // Redis's defaults but for a short node timeout (2 s): the kind of cluster a managed
        // service runs, where every master answers CLUSTERDOWN from the moment one is flagged
        // failing until its replica is promoted.
        try await RedisCluster.with(replicasPerMaster: 1) { cluster in
            // The commands' deadline (30 s) is what bounds a wait: far longer than the moment.
            let configuration = try testConfiguration(url: cluster.url, poolSize: 1)
            try await withClient(configuration) { client in
                let victim = cluster.servers[0]
                let keys = (0..<12).map { "auto:{\($0)}" }
                var onVictim: Set<String> = []
                for key in keys where try await cluster.port(servingKey: key) == victim.port { onVictim.insert(key) }
                try #require(!onVictim.isEmpty && onVictim.count < keys.count)
                let traffic = CommandTraffic()
                let sending = Task { await traffic.run(client, keys: keys) }
                defer { traffic.stop() }
                #expect(try await eventually(within: .seconds(60)) { traffic.all.count >= keys.count * 2 })

                await victim.kill()
                let replica = try await cluster.replica(of: victim)
                // Nobody helps: the other masters flag it failing and elect its replica.
                let probe = try #require(onVictim.first)
                #expect(try await eventually(within: .seconds(120)) { (try? await cluster.port(servingKey: probe)) == replica.port })
                let promoted = ContinuousClock.now
                #expect(try await eventually(within: .seconds(120)) {
                    Set(traffic.answered(since: promoted).filter { $0.ok }.map(\.key)) == Set(keys)
                })
                traffic.stop()
                await sending.value
                let refused = traffic.all.filter { !$0.ok && !onVictim.contains($0.key) }
                #expect(refused.isEmpty, "commands for healthy masters refused: \(refused.prefix(10).map { "\($0.key): \($0.error)" })")
            }
        }
    }
}

/// One task per key writes it again and again until stopped, recording every answer.
final class CommandTraffic: Sendable {
    struct Answer: Sendable {
        var key: String
        var ok: Bool
        var error: String
        var at: ContinuousClock.Instant
    }

    private let answers = Mutex<[Answer]>([])
    private let stopped = Atomic<Bool>(false)

    func run(_ client: any RedisClientProtocol, keys: [String]) async {
        await withTaskGroup(of: Void.self) { group in
            for key in keys {
                group.addTask {
                    var round = 0
                    while !self.stopped.load(ordering: .relaxed) {
                        var answer = Answer(key: key, ok: true, error: "", at: .now)
                        do {
                            _ = try await client.send("SET", key, round)
                        } catch {
                            answer.ok = false
                            answer.error = "\(error)"
                        }
                        answer.at = .now
                        self.answers.withLock { $0.append(answer) }
                        round += 1
                        // Pacing, not a wait on anything: refusals come back fast and would spin.
                        try? await Task.sleep(for: .milliseconds(answer.ok ? 5 : 50))
                    }
                }
            }
        }
    }

    func stop() { stopped.store(true, ordering: .relaxed) }

    func answered(since instant: ContinuousClock.Instant) -> [Answer] {
        answers.withLock { $0.filter { $0.at > instant } }
    }

    var all: [Answer] { answers.withLock { $0 } }
}
