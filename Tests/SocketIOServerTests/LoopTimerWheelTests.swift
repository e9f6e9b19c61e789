import NIOCore
import NIOPosix
@testable import SocketIOServer
import Synchronization
import Testing

/// The per-loop timer of every session, on a real event loop: nothing fires before its deadline,
/// a moved or cancelled deadline never fires, far deadlines wait their turn, a cancelled entry
/// lets its target go, and an empty wheel stops its timer.
@Suite("LoopTimerWheel")
struct LoopTimerWheelTests {
    /// Records when it fired.
    final class Target: LoopTimerTarget, @unchecked Sendable {
        var timerPosition: LoopTimerPosition?
        var fired: [NIODeadline] = []
        let onFire: @Sendable () -> Void

        init(onFire: @escaping @Sendable () -> Void) {
            self.onFire = onFire
        }

        func timerFired() {
            fired.append(.now())
            onFire()
        }
    }

    @Test("a cancelled entry lets its target go at once; a scheduled one holds it")
    func cancelReleases() async throws {
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        let (heldWhileScheduled, releasedOnCancel) = try await loop.submit {
            let wheel = LoopTimerWheel<Target>(loop: loop, granularity: .milliseconds(10))
            var target: Target? = Target {}
            weak let watched = target
            wheel.schedule(target!, at: .now() + .seconds(60))
            let strong = watched!
            target = nil
            let held = watched != nil
            wheel.cancel(strong)
            _ = consume strong
            return (held, watched == nil)
        }.get()
        #expect(heldWhileScheduled)
        #expect(releasedOnCancel)
    }

    @Test("due entries fire at or after their deadline, in order, once; a moved or cancelled one never; then the timer stops")
    func firesInOrderAndStops() async throws {
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        let (fires, continuation) = AsyncStream<Void>.makeStream()
        let (targets, deadlines) = try await loop.submit {
            let wheel = LoopTimerWheel<Target>(loop: loop, granularity: .milliseconds(10), slotCount: 8)
            let now = NIODeadline.now()
            // 8 slots of 10 ms: the third deadline is past the ring and waits for its turn.
            let deadlines = [now + .milliseconds(30), now + .milliseconds(5), now + .milliseconds(200)]
            let targets = deadlines.map { _ in Target { continuation.yield() } }
            // Scheduled first far away, then moved: only the second deadline counts.
            wheel.schedule(targets[0], at: now + .milliseconds(60))
            for (target, deadline) in zip(targets, deadlines) {
                wheel.schedule(target, at: deadline)
            }
            // Cancelled: never fires.
            let cancelled = Target { continuation.yield() }
            wheel.schedule(cancelled, at: now + .milliseconds(20))
            wheel.cancel(cancelled)
            return (NIOLoopBound((targets + [cancelled], wheel), eventLoop: loop), deadlines)
        }.get()
        var remaining = fires.makeAsyncIterator()
        for _ in 0..<3 { _ = await remaining.next() }
        try await loop.submit {
            let (targets, _) = targets.value
            for (target, deadline) in zip(targets, deadlines) {
                #expect(target.fired.count == 1)
                #expect(target.fired[0] >= deadline)
            }
            #expect(targets[1].fired[0] <= targets[0].fired[0] && targets[0].fired[0] <= targets[2].fired[0])
        }.get()
        // The moved entry's old slot comes and goes: nothing more fires, and the timer stops.
        let patience = ContinuousClock.now + .seconds(10)
        while try await !loop.submit({ targets.value.1.isIdle }).get() {
            try #require(ContinuousClock.now < patience, "the wheel's timer still runs with nothing to serve")
            try await Task.sleep(for: .milliseconds(10))
        }
        try await loop.submit {
            #expect(targets.value.0.map(\.fired.count) == [1, 1, 1, 0])
        }.get()
    }

    @Test("a target fired first may cancel another of the same slot, which then does not fire")
    func cancelWithinTheServedSlot() async throws {
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        let (fires, continuation) = AsyncStream<Void>.makeStream()
        let targets = try await loop.submit {
            let wheel = LoopTimerWheel<Target>(loop: loop, granularity: .milliseconds(10))
            let deadline = NIODeadline.now() + .milliseconds(5)
            let second = Target { continuation.yield() }
            let first = Target { [unowned second] in
                wheel.cancel(second)
                continuation.yield()
            }
            wheel.schedule(first, at: deadline)
            wheel.schedule(second, at: deadline)
            return NIOLoopBound((first, second, wheel), eventLoop: loop)
        }.get()
        var remaining = fires.makeAsyncIterator()
        _ = await remaining.next()
        let patience = ContinuousClock.now + .seconds(10)
        while try await !loop.submit({ targets.value.2.isIdle }).get() {
            try #require(ContinuousClock.now < patience, "the wheel's timer still runs with nothing to serve")
            try await Task.sleep(for: .milliseconds(10))
        }
        try await loop.submit {
            #expect(targets.value.0.fired.count == 1)
            #expect(targets.value.1.fired.count == 0)
        }.get()
    }
}
