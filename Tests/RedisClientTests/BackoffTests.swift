import Testing

@testable import RedisClient

@Suite("Backoff.delay(attempt:)")
struct BackoffTests {
    private static let samples = 200

    /// The delays of `samples` calls for one attempt.
    private static func delays(_ backoff: Backoff, attempt: Int) -> [Duration] {
        (0..<samples).map { _ in backoff.delay(attempt: attempt) }
    }

    @Test("each delay lies in [ceiling/2, ceiling] for ceiling = initial * 2^(attempt-1), capped")
    func withinJitterRange() {
        let backoff = Backoff()
        for attempt in 1...12 {
            let ceiling = min(Duration.milliseconds(50) * (1 << (attempt - 1)), .seconds(2))
            for delay in Self.delays(backoff, attempt: attempt) {
                #expect(delay >= ceiling / 2 && delay <= ceiling, "attempt \(attempt): \(delay) outside [\(ceiling / 2), \(ceiling)]")
            }
        }
    }

    @Test("delays grow with the attempt until the cap")
    func grows() {
        let backoff = Backoff(initial: .milliseconds(10), maximum: .seconds(10))
        for attempt in 1...9 {
            let current = Self.delays(backoff, attempt: attempt)
            let next = Self.delays(backoff, attempt: attempt + 1)
            // The ceiling doubles, so the next range starts where this one ends.
            #expect(next.min()! >= current.max()!, "attempt \(attempt + 1) not later than attempt \(attempt)")
        }
    }

    @Test("delays are jittered, not all equal")
    func jittered() {
        #expect(Set(Self.delays(Backoff(), attempt: 3)).count > 1)
    }

    @Test("late attempts stay within [maximum/2, maximum]", arguments: [7, 20, 21, 64, 1_000, Int.max])
    func capped(attempt: Int) {
        let backoff = Backoff(initial: .milliseconds(50), maximum: .seconds(2))
        for delay in Self.delays(backoff, attempt: attempt) {
            #expect(delay >= .seconds(1) && delay <= .seconds(2), "\(delay)")
        }
    }

    @Test("attempt 0 or below is treated as the first", arguments: [0, -1, -100])
    func earlyAttempts(attempt: Int) {
        for delay in Self.delays(Backoff(), attempt: attempt) {
            #expect(delay >= .milliseconds(25) && delay <= .milliseconds(50), "\(delay)")
        }
    }

    @Test("a maximum below the next doubling is the ceiling")
    func maximumBetweenDoublings() {
        let backoff = Backoff(initial: .seconds(1), maximum: .milliseconds(1500))
        for delay in Self.delays(backoff, attempt: 2) {
            #expect(delay >= .milliseconds(750) && delay <= .milliseconds(1500), "\(delay)")
        }
    }
}
