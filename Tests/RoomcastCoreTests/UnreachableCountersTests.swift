import Testing

@testable import RoomcastCore

/// The rate limiter's fail-open window, on a hand-moved clock.
@Suite("UnreachableCounters")
struct UnreachableCountersTests {
    @Test("a scope whose counter cannot be reached passes for the limit from its first failure, then not; reaching it starts over")
    func boundedWindow() {
        let counters = UnreachableCounters()
        let start = ContinuousClock.now
        #expect(counters.admit("rest:u1", for: .seconds(30), now: start))
        #expect(counters.admit("rest:u1", for: .seconds(30), now: start + .seconds(29)))
        #expect(!counters.admit("rest:u1", for: .seconds(30), now: start + .seconds(30)))
        // Another scope has a window of its own.
        #expect(counters.admit("rest:u2", for: .seconds(30), now: start + .seconds(30)))
        counters.reached("rest:u1")
        #expect(counters.admit("rest:u1", for: .seconds(30), now: start + .seconds(31)))
    }

    @Test("past its capacity, a new scope fails closed until old windows have ended")
    func bounded() {
        let counters = UnreachableCounters()
        let start = ContinuousClock.now
        let admitted = (0..<UnreachableCounters.capacity).filter { counters.admit("s\($0)", for: .seconds(30), now: start) }
        #expect(admitted.count == UnreachableCounters.capacity)
        #expect(!counters.admit("new", for: .seconds(30), now: start + .seconds(1)))
        #expect(counters.admit("new", for: .seconds(30), now: start + .seconds(31)))
    }
}
