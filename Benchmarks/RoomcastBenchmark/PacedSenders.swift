import Foundation

/// The timed part of a publishing scenario: one sender per room yields a frame to its socket's
/// outbox `rate` times a second for `seconds`, recording each send; around it, the servers' CPU.
struct PacedSenders {
    /// What the servers spent while the senders ran (plus two seconds to drain).
    struct Outcome {
        var seconds: Double
        var redisCPU: Double
        var gatewayCPU: Double?
    }

    let context: BenchContext
    let recorder: LatencyRecorder
    let outboxes: [AsyncStream<String>.Continuation]

    /// Runs the senders; `frame(room, sequence)` is the text room `room` sends `sequence`th.
    func run(frame: @escaping @Sendable (Int, Int) -> String) async throws -> Outcome {
        let options = context.options
        let redis = try await RedisProbe(url: options.redisURL)
        let redisBefore = try await redis.cpuSeconds()
        let before = ProcessStats.read(options.pids)
        let interval = Duration.nanoseconds(Int64(1e9 / options.rate))
        let start = ContinuousClock.now
        let deadline = start + .seconds(options.seconds)
        let recorder = self.recorder
        await withTaskGroup(of: Void.self) { group in
            for (room, outbox) in outboxes.enumerated() {
                group.addTask {
                    // Spread the senders over the first interval so ticks do not all coincide.
                    try? await Task.sleep(for: interval * Double.random(in: 0..<1))
                    var sequence = 0
                    var next = ContinuousClock.now
                    while next < deadline {
                        recorder.sent(room: room, sequence: sequence)
                        outbox.yield(frame(room, sequence))
                        sequence += 1
                        next += interval
                        try? await Task.sleep(until: next)
                    }
                }
            }
        }
        let seconds = (ContinuousClock.now - start).seconds
        try await Task.sleep(for: .seconds(2))
        let redisAfter = try await redis.cpuSeconds()
        let after = ProcessStats.read(options.pids)
        for outbox in outboxes { outbox.finish() }
        return Outcome(
            seconds: seconds, redisCPU: redisAfter - redisBefore,
            gatewayCPU: options.pids.isEmpty ? nil : ProcessStats.cpuUsed(from: before, to: after)
        )
    }
}
