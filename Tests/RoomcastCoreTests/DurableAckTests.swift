import Foundation
import NIOCore
import RedisClient
import RoomcastCore
import RoomcastTestSupport
import Synchronization
import Testing

/// Durable acks (`redis.wait_replicas`) on a Redis Cluster of 3 masters + 3 replicas with AOF:
/// messages are sent under traffic in rooms on one master; its replica is made to lag (frozen,
/// SIGSTOP), the master is SIGKILLed, and the replica, killed too with what it had not applied
/// (SIGKILL drops its unread replication stream) and started again from its AOF, is promoted
/// (`CLUSTER FAILOVER TAKEOVER`); the old master comes back as its replica. Every message
/// acknowledged under durable acks is then in its room's history; with plain acks, the ones
/// acknowledged while the replica lagged are not.
@Suite(
    "Durable acks: no acknowledged change lost in a failover", .serialized,
    .disabled(if: TestRedis.Mode.selected == .cluster, "builds a cluster with replicas of its own: runs in the standalone pass")
)
struct DurableAckTests {
    /// What one send was answered.
    struct Outcome: Sendable {
        var room: RoomID
        var text: String
        var acknowledged: Bool
        var answered: ContinuousClock.Instant
    }

    /// Sends on, one message after another in each room, until stopped; records every answer.
    final class Traffic: Sendable {
        let outcomes = Mutex<[Outcome]>([])
        private let stopped = Atomic<Bool>(false)

        func run(_ messages: MessageStore, from sender: User, in rooms: [RoomID]) async {
            await withTaskGroup(of: Void.self) { group in
                for room in rooms {
                    group.addTask {
                        var index = 0
                        while !self.stopped.load(ordering: .relaxed) {
                            let request = RequestID.random()
                            let text = "\(room.rawValue.prefix(6))-\(index)-\(request.rawValue.prefix(8))"
                            let acknowledged = (try? await messages.send(text, from: sender, to: room, requestId: request)) != nil
                            self.outcomes.withLock { $0.append(Outcome(room: room, text: text, acknowledged: acknowledged, answered: .now)) }
                            index += 1
                            // Pacing, not a wait on anything: refusals come back fast and would spin.
                            try? await Task.sleep(for: .milliseconds(acknowledged ? 5 : 50))
                        }
                    }
                }
            }
        }

        func stop() { stopped.store(true, ordering: .relaxed) }

        func answered(since instant: ContinuousClock.Instant) -> [Outcome] {
            outcomes.withLock { $0.filter { $0.answered > instant } }
        }
    }

    /// Runs the scenario; returns the acknowledged messages missing from the history after the
    /// failover, and how many were acknowledged while the replica lagged.
    static func failover(durable: Bool) async throws -> (lost: [String], acknowledgedWhileLagging: Int, refusedWhileLagging: Int) {
        let arguments = try ShardFailureTests.deployedClusterOptions() + [
            "--appendonly", "yes", "--appendfsync", "everysec",
            // The test promotes the replica itself, once it is back from its restart.
            "--cluster-replica-no-failover", "yes", "--cluster-replica-validity-factor", "0",
        ]
        return try await RedisCluster.with(replicasPerMaster: 1, arguments: arguments) { cluster in
            var configuration = try testConfiguration(url: cluster.url)
            if durable {
                configuration.writeDurability = .replicas(1, timeout: .milliseconds(300))
            }
            return try await withClient(configuration) { client in
                let users = UserStore(redis: client)
                let alice = try await users.create(username: "alice", passwordHash: "h", displayName: nil)
                let victim = cluster.servers[0]
                // Three rooms whose keys live on the master that dies.
                var found: [RoomID] = []
                while found.count < 3 {
                    let room = try await RoomStore(redis: client).create(by: alice.id, with: [], name: nil)
                    if try await cluster.port(servingKey: RedisKeys.room(room.id)) == victim.port { found.append(room.id) }
                }
                let rooms = found
                let replica = try await cluster.replica(of: victim)
                let messages = MessageStore(redis: client)
                let traffic = Traffic()
                let sending = Task { await traffic.run(messages, from: alice, in: rooms) }
                defer { traffic.stop() }
                let start = ContinuousClock.now
                #expect(try await eventually(within: .seconds(120)) { traffic.answered(since: start).filter(\.acknowledged).count >= 6 })

                // The replica lags: the master's writes stop reaching it.
                await replica.freeze()
                let frozen = ContinuousClock.now
                #expect(try await eventually(within: .seconds(120)) { traffic.answered(since: frozen).count >= 6 })
                await victim.kill()
                let killed = ContinuousClock.now
                let whileLagging = traffic.outcomes.withLock { $0.filter { $0.answered > frozen && $0.answered < killed } }

                // The replica goes with what it had not applied, comes back from its AOF, and
                // takes over.
                await replica.kill()
                try await replica.start()
                // Refused while it loads its AOF (`LOADING`): asked until it takes it.
                #expect(try await eventually(within: .seconds(120)) {
                    (try? await cluster.cli(port: replica.port, ["CLUSTER", "FAILOVER", "TAKEOVER"]))?.contains("OK") == true
                })
                let key = RedisKeys.room(rooms[0])
                #expect(try await eventually(within: .seconds(120)) { (try? await cluster.port(servingKey: key)) == replica.port })
                // The promoted master has no replica: durable acks refuse its rooms' changes until
                // it has one again. The old master comes back from its AOF as that replica (its
                // own late writes dropped by the resync).
                try await victim.start()
                #expect(try await eventually(within: .seconds(120)) {
                    (try? await cluster.cli(port: victim.port, ["INFO", "replication"]))?.contains("master_link_status:up") == true
                })
                // Sends go through again in every room.
                let promoted = ContinuousClock.now
                #expect(try await eventually(within: .seconds(120)) {
                    Set(traffic.answered(since: promoted).filter(\.acknowledged).map(\.room)) == Set(rooms)
                })
                traffic.stop()
                await sending.value

                var stored: Set<String> = []
                for room in rooms {
                    let page = try await eventuallyValue { try await messages.history(of: room, for: alice.id, before: nil, limit: 100_000) }
                    stored.formUnion(page.messages.map(\.text))
                }
                let acknowledged = traffic.outcomes.withLock { $0.filter(\.acknowledged).map(\.text) }
                return (
                    acknowledged.filter { !stored.contains($0) }, whileLagging.filter(\.acknowledged).count,
                    whileLagging.filter { !$0.acknowledged }.count
                )
            }
        }
    }

    /// `body`'s value once it stops throwing (a read just after a promotion may be refused).
    static func eventuallyValue<Value: Sendable>(_ body: @Sendable () async throws -> Value) async throws -> Value {
        var lastError: (any Error)?
        for _ in 0..<600 {
            do { return try await body() } catch { lastError = error }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw lastError ?? ScenarioError(description: "no value")
    }

    struct ScenarioError: Error, CustomStringConvertible {
        var description: String
    }

    @Test("with durable acks, every acknowledged message survives the master's loss; those sent while the replica lagged were refused")
    func durable() async throws {
        let (lost, _, refused) = try await Self.failover(durable: true)
        #expect(lost.isEmpty, "acknowledged and lost: \(lost)")
        #expect(refused > 0, "no send was refused while the replica lagged: the scenario did not make it lag")
    }

    @Test("with plain acks, the messages acknowledged while the replica lagged are lost with the master")
    func plain() async throws {
        let (lost, acknowledged, _) = try await Self.failover(durable: false)
        #expect(acknowledged > 0)
        #expect(!lost.isEmpty, "nothing acknowledged was lost: the scenario did not make the replica lag")
    }
}
