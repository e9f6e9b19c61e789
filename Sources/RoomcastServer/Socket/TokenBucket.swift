/// A token bucket: on average `rate` events per second, in bursts of up to `burst`.
///
/// A value owned by one socket's reader task, given the time by its caller so tests need no clock.
struct TokenBucket {
    /// Events per second, on average.
    let rate: Double
    /// Most events at once.
    let burst: Double
    private var tokens: Double
    private var last: ContinuousClock.Instant

    /// A full bucket.
    init(rate: Double, burst: Int, now: ContinuousClock.Instant) {
        self.rate = rate
        self.burst = Double(burst)
        self.tokens = Double(burst)
        self.last = now
    }

    /// Takes one token if there is one; false when the caller is over its rate.
    mutating func take(now: ContinuousClock.Instant) -> Bool {
        let elapsed = now - last
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        tokens = min(burst, tokens + max(0, seconds) * rate)
        last = max(last, now)
        guard tokens >= 1 else { return false }
        tokens -= 1
        return true
    }
}
