import Foundation
import RedisClient
import RoomcastCore
import Synchronization

/// Redis's own CPU per room operation, from the stores the gateway calls (their real scripts and
/// keys), against a Redis on this machine (`scripts/bench-redis.sh scripts`).
///
/// Each operation is timed twice: one in flight at a time, when Redis wakes up, reads, runs and
/// writes for each one by itself, and 64 in flight, when the client pipelines them and Redis
/// serves many per wake-up. The difference is what a request costs Redis apart from its work.
/// The room is the chat shape of `scripts/bench.sh floor`: 100 participants, all present, and
/// two subscribers on its channel (the two nodes).
///
/// Usage: RedisScriptsBenchmark <redis-url> [operations per measurement]
///        RedisScriptsBenchmark ack <redis-url of a master with a replica> [operations] (``AckLatency``)
@main
struct RedisScriptsBenchmark {
    static let inFlightCounts = [1, 64]

    static func main() async throws {
        var arguments = Array(CommandLine.arguments.dropFirst())
        if arguments.first == "ack", arguments.count > 1 {
            arguments.removeFirst()
            do {
                try await AckLatency.run(url: arguments[0], operations: arguments.count > 1 ? Int(arguments[1]) ?? 10_000 : 10_000)
            } catch {
                print("ack latency: \(error)")
                exit(1)
            }
            return
        }
        guard let url = arguments.first else {
            print("usage: RedisScriptsBenchmark <redis-url> [operations] | RedisScriptsBenchmark ack <redis-url> [operations]")
            exit(2)
        }
        let operations = arguments.count > 1 ? Int(arguments[1]) ?? 20_000 : 20_000

        var configuration = try RedisConfiguration(url: url)
        configuration.poolSize = 1
        configuration.commandTimeout = .seconds(30)
        let client = RedisClient(configuration: configuration)
        let delivered = Atomic<Int>(0)
        let subscribers = (0..<2).map { _ in
            RedisSubscriber(configuration: configuration) { event in
                if case .message = event { delivered.add(1, ordering: .relaxed) }
            }
        }
        let runners = [Task { await client.run() }] + subscribers.map { subscriber in Task { await subscriber.run() } }
        defer { runners.forEach { $0.cancel() } }

        let room = try await ChatRoom.make(client, members: 100)
        for subscriber in subscribers { try await subscriber.subscribe([RedisKeys.roomChannel(room.id)]) }
        let redisPID = try await serverPID(client)

        let messages = MessageStore(redis: client)
        let elements = ElementStore(redis: client)
        let previews = CanvasPreviewRelay(redis: client)
        let element = try await elements.create(
            try JSONDecoder().decode(ElementDraft.self, from: Data(#"{"type":"note","positionX":10,"positionY":20,"width":100,"height":80}"#.utf8)),
            by: room.sender, in: room.id
        )
        let move = try JSONDecoder().decode(ElementChanges.self, from: Data(#"{"positionX":42}"#.utf8))
        let preview = try CanvasPreview(room: room.id, kind: .drag(element.id), x: 1, y: 2)

        let shapes: [(String, @Sendable () async throws -> Void)] = [
            ("message:send", { _ = try await messages.send("a chat message of some sixty-four bytes, as the floor's chat sends", from: room.sender, to: room.id) }),
            ("element:update", { _ = try await elements.apply(element.id, with: move, by: room.sender.id, in: room.id) }),
            ("element:drag (preview)", { try await previews.publish(preview, from: room.sender.id, socket: "bench-socket") }),
        ]
        print("Redis CPU per operation (utime+stime of redis-server \(redisPID)), \(operations) operations each, room of \(room.members) present, 2 subscribers")
        print("operation                 in flight   Redis µs/op   ops/s")
        var lines: [String] = []
        for (name, operation) in shapes {
            for inFlight in inFlightCounts {
                // Warm-up: the message stream reaches its kept length, so trimming is in the figure.
                _ = try await measure(redisPID, operations: 2_000, inFlight: inFlight, operation)
                _ = try await client.send("CONFIG", "RESETSTAT")
                let (cpu, rate) = try await measure(redisPID, operations: operations, inFlight: inFlight, operation)
                let commands = try await CommandStats(client).perOperation(operations)
                print(name.padding(toLength: 25, withPad: " ", startingAt: 0) + String(format: " %9d %13.1f %7.0f", inFlight, cpu, rate))
                if inFlight == inFlightCounts.last { print("    inside Redis, per operation: " + commands) }
                lines.append(#"{"operation":"\#(name)","in_flight":\#(inFlight),"redis_cpu_us":\#(String(format: "%.2f", cpu)),"ops_per_s":\#(Int(rate))}"#)
            }
        }
        print("subscribers received \(delivered.load(ordering: .relaxed)) messages")
        for line in lines { print(line) }
    }

    /// Runs `operations` from `inFlight` tasks; returns Redis's CPU µs per operation and the rate.
    static func measure(
        _ pid: Int, operations: Int, inFlight: Int, _ operation: @escaping @Sendable () async throws -> Void
    ) async throws -> (Double, Double) {
        let next = Tickets()
        let before = try cpuTicks(pid)
        let start = ContinuousClock.now
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<inFlight {
                group.addTask {
                    while next.take() < operations { try await operation() }
                }
            }
            try await group.waitForAll()
        }
        let elapsed = ContinuousClock.now - start
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let cpu = Double(try cpuTicks(pid) - before) / Double(sysconf(Int32(_SC_CLK_TCK)))
        return (cpu / Double(operations) * 1e6, Double(operations) / seconds)
    }

    /// utime + stime of a process, in clock ticks.
    static func cpuTicks(_ pid: Int) throws -> Int {
        let stat = try String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)
        let fields = stat[stat.range(of: ") ")!.upperBound...].split(separator: " ")
        return Int(fields[11])! + Int(fields[12])!
    }

    static func serverPID(_ client: RedisClient) async throws -> Int {
        let info = try await client.send("INFO", "server").string ?? ""
        guard let line = info.split(whereSeparator: \.isNewline).first(where: { $0.hasPrefix("process_id:") }),
            let pid = Int(line.dropFirst("process_id:".count))
        else { throw RedisError(.unexpectedReply, "INFO server has no process_id") }
        return pid
    }
}

/// `INFO commandstats` since the last `CONFIG RESETSTAT`: each command's calls and Redis's own
/// µs in it per operation (commands run by scripts counted too, and in their script's time).
struct CommandStats {
    var entries: [(name: String, calls: Int, usec: Int)] = []

    init(_ client: RedisClient) async throws {
        let info = try await client.send("INFO", "commandstats").string ?? ""
        for line in info.split(whereSeparator: \.isNewline) where line.hasPrefix("cmdstat_") {
            // cmdstat_xadd:calls=2,usec=15,usec_per_call=7.50,...
            let name = line.dropFirst("cmdstat_".count).prefix { $0 != ":" }
            var fields: [Substring: Int] = [:]
            for pair in line.drop { $0 != ":" }.dropFirst().split(separator: ",") {
                let parts = pair.split(separator: "=")
                if parts.count == 2, let value = Int(parts[1]) { fields[parts[0]] = value }
            }
            guard let calls = fields["calls"], let usec = fields["usec"], name != "config|resetstat" else { continue }
            entries.append((String(name), calls, usec))
        }
        entries.sort { $0.usec > $1.usec }
    }

    func perOperation(_ operations: Int) -> String {
        entries.filter { $0.calls * 20 >= operations }.map { entry in
            String(format: "%@ ×%.2f %.1f µs", entry.name, Double(entry.calls) / Double(operations), Double(entry.usec) / Double(operations))
        }.joined(separator: ", ")
    }
}

/// Hands out operation numbers to the tasks sharing a measurement.
final class Tickets: Sendable {
    private let issued = Atomic<Int>(0)

    func take() -> Int { issued.add(1, ordering: .relaxed).oldValue }
}

/// A room whose participants are all present, as in the floor's chat shape.
struct ChatRoom: Sendable {
    var id: RoomID
    var sender: User
    var members: Int

    static func make(_ client: RedisClient, members: Int) async throws -> ChatRoom {
        let users = UserStore(redis: client)
        let stamp = UInt32.random(in: 0...UInt32.max)
        var created: [User] = []
        for index in 0..<members {
            created.append(try await users.create(username: "bench-\(stamp)-\(index)", passwordHash: "-", displayName: nil))
        }
        let room = try await RoomStore(redis: client).create(by: created[0].id, with: created.dropFirst().map(\.id), name: nil)
        let presence = PresenceStore(redis: client)
        for user in created { try await presence.join(room.id, user: user.id, socket: "bench-\(user.id.rawValue)") }
        return ChatRoom(id: room.id, sender: created[0], members: members)
    }
}
