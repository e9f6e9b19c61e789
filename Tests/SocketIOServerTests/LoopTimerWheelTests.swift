import NIOCore
import NIOPosix
@testable import SocketIOServer
import Synchronization
import Testing

/// The per-loop timer of every session, on a real event loop: nothing fires before its deadline,
/// stale entries never fire, far deadlines wait their turn, and an empty wheel stops its timer.
@Suite("LoopTimerWheel")
struct LoopTimerWheelTests {
    /// Records when each generation fired; `latest` is the only generation that counts.
    final class Target: LoopTimerTarget, @unchecked Sendable {
        var latest: UInt64 = 0
        var fired: [(generation: UInt64, at: NIODeadline)] = []
        let onFire: @Sendable () -> Void

        init(onFire: @escaping @Sendable () -> Void) {
            self.onFire = onFire
        }

        func timerFired(generation: UInt64) {
            guard generation == latest else { return }
            fired.append((generation, .now()))
            onFire()
        }
    }

    @Test("an entry does not keep its target alive")
    func entriesAreWeak() async throws {
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        let released = try await loop.submit {
            let wheel = LoopTimerWheel(loop: loop, granularity: .milliseconds(10))
            var target: Target? = Target {}
            weak let watched = target
            target!.latest = 1
            wheel.schedule(target!, generation: 1, at: .now() + .seconds(60))
            target = nil
            return watched == nil
        }.get()
        #expect(released)
    }

    @Test("due entries fire at or after their deadline, in order; a stale one never; then the timer stops")
    func firesInOrderAndStops() async throws {
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        let (fires, continuation) = AsyncStream<Void>.makeStream()
        let (targets, deadlines) = try await loop.submit {
            let wheel = LoopTimerWheel(loop: loop, granularity: .milliseconds(10), slotCount: 8)
            let now = NIODeadline.now()
            // 8 slots of 10 ms: the last deadline is past the ring and waits for its turn.
            let deadlines = [now + .milliseconds(30), now + .milliseconds(5), now + .milliseconds(200)]
            let targets = deadlines.map { _ in Target { continuation.yield() } }
            for (target, deadline) in zip(targets, deadlines) {
                target.latest = 1
                wheel.schedule(target, generation: 1, at: deadline)
            }
            // Re-armed before it fired: its first entry is stale.
            targets[0].latest = 2
            wheel.schedule(targets[0], generation: 2, at: deadlines[0])
            return (NIOLoopBound((targets, wheel), eventLoop: loop), deadlines)
        }.get()
        var remaining = fires.makeAsyncIterator()
        for _ in 0..<3 { _ = await remaining.next() }
        try await loop.submit {
            let (targets, wheel) = targets.value
            for (target, deadline) in zip(targets, deadlines) {
                #expect(target.fired.count == 1)
                #expect(target.fired[0].at >= deadline)
            }
            #expect(targets[0].fired[0].generation == 2)
            #expect(targets[1].fired[0].at <= targets[0].fired[0].at && targets[0].fired[0].at <= targets[2].fired[0].at)
        }.get()
        // The stale entry's slot comes and goes: nothing more fires, and the timer stops.
        let patience = ContinuousClock.now + .seconds(10)
        while try await !loop.submit({ targets.value.1.isIdle }).get() {
            try #require(ContinuousClock.now < patience, "the wheel's timer still runs with nothing to serve")
            try await Task.sleep(for: .milliseconds(10))
        }
        try await loop.submit {
            #expect(targets.value.0.map(\.fired.count) == [1, 1, 1])
        }.get()
    }
}
