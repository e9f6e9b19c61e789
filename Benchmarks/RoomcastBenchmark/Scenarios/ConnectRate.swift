import Foundation
import Synchronization

/// `connect`: `connections` sockets opened with at most `concurrency` handshakes at once, each
/// closed once its Socket.IO CONNECT (JWT check included) is acknowledged. Reports connections
/// per second and the time from dialling to the CONNECT acknowledgement.
enum ConnectRate {
    static func run(_ context: BenchContext) async throws -> BenchReport {
        let options = context.options
        let count = options.connections
        let users = try await context.registerUsers(max(1, (count + options.socketsPerUser - 1) / options.socketsPerUser), prefix: "k")
        let durations = Mutex<[Double]>([])
        let failures = Counter()
        let before = ProcessStats.read(options.pids)
        let start = ContinuousClock.now
        _ = try await BenchContext.parallel(count, width: options.concurrency) { index in
            let dialled = ContinuousClock.now
            // A finished outbox: the socket closes as soon as it is connected.
            let (outbox, continuation) = AsyncStream.makeStream(of: String.self)
            continuation.finish()
            let socket = BenchSocket(
                url: BenchSocket.url(context.gateway(index), token: users[index % users.count].token), rooms: [], outbox: outbox,
                onConnected: { durations.withLock { $0.append((ContinuousClock.now - dialled).seconds) } }
            )
            do {
                try await socket.run(logger: context.logger)
            } catch {
                failures.add()
            }
        }
        let elapsed = (ContinuousClock.now - start).seconds
        let after = ProcessStats.read(options.pids)
        let times = durations.withLock { $0 }.sorted()
        let connected = times.count
        func percentile(_ p: Double) -> Double { times.isEmpty ? 0 : times[min(times.count - 1, Int(Double(times.count) * p))] }

        var report = BenchReport(scenario: "connect")
        report.add("connections", connected)
        report.add("connect_errors", count - connected)
        report.add("concurrency", options.concurrency)
        report.add("seconds", elapsed)
        report.add("connections_per_second", Double(connected) / elapsed, digits: 0)
        report.line("connect: \(connected) of \(count) sockets connected and authenticated in \(elapsed.formatted(2)) s over \(options.gateways.count) node(s), \(options.concurrency) at once: \((Double(connected) / elapsed).formatted(0))/s")
        report.addLatency(LatencyRecorder.Summary(sent: count, received: connected, p50: percentile(0.5), p90: percentile(0.9), p99: percentile(0.99), max: times.last ?? 0))
        let perConnection = options.pids.isEmpty || connected == 0 ? nil : ProcessStats.cpuUsed(from: before, to: after) / Double(connected) * 1e6
        report.add("gateway_cpu_us_per_connection", perConnection, digits: 1)
        report.line("gateways \(perConnection?.formatted(1) ?? "-") µs CPU per connection (open, CONNECT, close)")
        return report
    }
}
