import Foundation
import RedisClient
import RoomcastCore

/// What durable acks (`redis.wait_replicas`) cost a change's ack: `message:send` through the
/// store, its reply with the master's answer alone and with `WAIT 1` after it, against a master
/// with one replica on this machine (`scripts/bench-redis.sh durable`).
///
/// The two are measured in alternating rounds, so that a machine whose load changes meanwhile
/// weighs on both alike; the load average is printed before and after.
enum AckLatency {
    static let rounds = 10

    static func run(url: String, operations: Int) async throws {
        var plainConfiguration = try RedisConfiguration(url: url)
        plainConfiguration.poolSize = 2
        plainConfiguration.commandTimeout = .seconds(30)
        var durableConfiguration = plainConfiguration
        durableConfiguration.writeDurability = .replicas(1, timeout: .milliseconds(500))
        let plain = RedisClient(configuration: plainConfiguration)
        let durable = RedisClient(configuration: durableConfiguration)
        let runners = [Task { await plain.run() }, Task { await durable.run() }]
        defer { runners.forEach { $0.cancel() } }

        let room = try await ChatRoom.make(plain, members: 2)
        // The replica may still be syncing: WAIT on the connection that just wrote tells when it has it.
        var replicas = 0
        for _ in 0..<60 where replicas < 1 {
            replicas = (try? Int(redisReply: try await plain.pipeline([RedisCommand("SET", "bench:probe", "1"), RedisCommand("WAIT", 1, 1000)])[1])) ?? 0
        }
        guard replicas >= 1 else { throw RedisError(.notReplicated, "\(url) has no replica in sync: start one (scripts/bench-redis.sh durable does)") }
        let text = "a chat message of some sixty-four bytes, as the floor's chat sends"
        let clients = [("master's reply", MessageStore(redis: plain)), ("WAIT 1 replica", MessageStore(redis: durable))]
        print("message:send ack latency, \(operations) sends per mode in \(rounds) alternating rounds; load average \(loadAverage())")
        for inFlight in [1, 16] {
            var samples: [String: [Duration]] = [:]
            for (_, store) in clients {
                _ = try await measure(store, room: room, text: text, operations: 500, inFlight: inFlight)  // warm-up
            }
            for _ in 0..<rounds {
                for (name, store) in clients {
                    samples[name, default: []] += try await measure(store, room: room, text: text, operations: operations / rounds, inFlight: inFlight)
                }
            }
            for (name, _) in clients {
                let sorted = (samples[name] ?? []).sorted()
                print(
                    "  \(inFlight) in flight, \(name.padding(toLength: 15, withPad: " ", startingAt: 0)): "
                        + "p50 \(micros(sorted, 0.5)) µs, p90 \(micros(sorted, 0.9)) µs, p99 \(micros(sorted, 0.99)) µs"
                )
            }
        }
        print("load average after: \(loadAverage())")
    }

    /// Each send's latency, from `inFlight` tasks sending `operations` in all.
    static func measure(_ store: MessageStore, room: ChatRoom, text: String, operations: Int, inFlight: Int) async throws -> [Duration] {
        let next = Tickets()
        return try await withThrowingTaskGroup(of: [Duration].self) { group in
            for _ in 0..<inFlight {
                group.addTask {
                    var latencies: [Duration] = []
                    while next.take() < operations {
                        let start = ContinuousClock.now
                        _ = try await store.send(text, from: room.sender, to: room.id)
                        latencies.append(ContinuousClock.now - start)
                    }
                    return latencies
                }
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
    }

    static func micros(_ sorted: [Duration], _ quantile: Double) -> Int {
        guard !sorted.isEmpty else { return 0 }
        let value = sorted[min(sorted.count - 1, Int(Double(sorted.count) * quantile))]
        return Int(value.components.seconds * 1_000_000 + value.components.attoseconds / 1_000_000_000_000)
    }

    static func loadAverage() -> String {
        ((try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)) ?? "?").split(separator: " ").prefix(3).joined(separator: " ")
    }
}
