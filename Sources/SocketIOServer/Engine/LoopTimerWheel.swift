import NIOCore
import Synchronization

/// The deadlines of every Engine.IO session on one event loop, served by one repeating timer.
///
/// A timer per session costs each idle socket a heap entry in NIO's scheduler, a wake-up of
/// its own for every ping and a cancel (a linear search of that heap) for every pong: measured
/// on a node holding 5,000 idle sockets, those were most of its CPU. Here the loop wakes once
/// per `granularity` and serves the targets due in that slot of a ring, as uWebSockets buckets
/// its timeouts. A deadline is met up to one `granularity` late, which is why it is a small
/// part of the ping timeout (see ``EngineIOSettings/timerGranularity``).
///
/// A target has one entry at most. It knows where that entry is (``LoopTimerTarget/timerPosition``),
/// so moving or cancelling it is O(1): the old entry becomes a hole that its slot drops when it
/// comes up. Entries hold their targets strongly, and a cancelled one lets go at once, so a
/// closed connection's objects do not outlive it, with no weak reference (its side table would
/// cost every connection memory). Confined to its loop.
final class LoopTimerWheel<Target: LoopTimerTarget> {
    private struct Entry {
        /// `nil`: cancelled or moved.
        var target: Target?
        let deadline: NIODeadline
    }

    private let loop: any EventLoop
    private let granularity: TimeAmount
    private var slots: [[Entry]]
    /// The slot served next, and the time up to which it covers.
    private var cursor = 0
    private var cursorEnd: NIODeadline
    /// Entries with a target.
    private var count = 0
    private var ticker: RepeatedTask?

    init(loop: any EventLoop, granularity: TimeAmount, slotCount: Int = 64) {
        precondition(slotCount >= 2)
        self.loop = loop
        self.granularity = granularity
        self.slots = Array(repeating: [], count: slotCount)
        self.cursorEnd = .now() + granularity
    }

    /// Calls `target.timerFired()` once `deadline` has passed (at most one granularity later),
    /// in place of the deadline it had.
    func schedule(_ target: Target, at deadline: NIODeadline) {
        cancel(target)
        if ticker == nil { start() }
        insert(Entry(target: target, deadline: deadline))
    }

    /// The target's deadline is dropped, and with it the wheel's reference.
    func cancel(_ target: Target) {
        guard let position = target.timerPosition else { return }
        target.timerPosition = nil
        slots[Int(position.slot)][Int(position.index)].target = nil
        count -= 1
    }

    private func insert(_ entry: Entry) {
        // Slots ahead of the cursor by whole granularities. One past the ring waits in the
        // farthest slot and is put back until it is due; the farthest is the one before the
        // cursor's, never the slot being served (that one is the cursor's predecessor too).
        let late = (entry.deadline - cursorEnd).nanoseconds
        let ahead = late <= 0 ? 0 : (late + granularity.nanoseconds - 1) / granularity.nanoseconds
        let offset = Int(min(ahead, Int64(slots.count - 2)))
        let slot = (cursor + offset) % slots.count
        entry.target?.timerPosition = LoopTimerPosition(slot: UInt32(slot), index: UInt32(slots[slot].count))
        slots[slot].append(entry)
        count += 1
    }

    private func start() {
        // The ring starts where the clock is: an idle loop stopped it with nothing to serve.
        cursorEnd = .now() + granularity
        ticker = loop.scheduleRepeatedTask(initialDelay: granularity, delay: granularity) { [self] _ in
            self.tick()
        }
    }

    private func tick() {
        let now = NIODeadline.now()
        // A slot is served once its end has passed; a late wake-up (a busy loop) serves every
        // slot it missed.
        while count > 0, cursorEnd <= now {
            let served = cursor
            let slotEnd = cursorEnd
            cursor = (cursor + 1) % slots.count
            cursorEnd = cursorEnd + granularity
            // In place: a target fired before another of this slot may cancel that one.
            var index = 0
            while index < slots[served].count {
                let entry = slots[served][index]
                index += 1
                guard let target = entry.target else { continue }
                target.timerPosition = nil
                count -= 1
                if entry.deadline > slotEnd {
                    insert(entry)
                } else {
                    target.timerFired()
                }
            }
            // Not kept: a burst of connections must not leave a large slot behind.
            slots[served] = []
        }
        if count == 0 {
            ticker?.cancel()
            ticker = nil
        }
    }

    /// No entry is waiting and the loop's timer is stopped.
    var isIdle: Bool { count == 0 && ticker == nil }
}

/// Where a target's entry is on its wheel.
struct LoopTimerPosition {
    let slot: UInt32
    let index: UInt32
}

/// What a ``LoopTimerWheel`` serves: an object with one deadline.
protocol LoopTimerTarget: AnyObject {
    /// The wheel's bookkeeping, kept by the target so that moving its deadline needs no search.
    var timerPosition: LoopTimerPosition? { get set }
    /// The deadline has passed; the target has none on the wheel until it schedules again.
    func timerFired()
}

extension EngineIOSession: LoopTimerTarget {}

@available(*, unavailable)
extension LoopTimerWheel: Sendable {}

/// One ``LoopTimerWheel`` per event loop, made when a loop's first target arms.
final class LoopTimerWheels<Target: LoopTimerTarget>: Sendable {
    private let granularity: TimeAmount
    private let wheels = Mutex<[ObjectIdentifier: NIOLoopBound<LoopTimerWheel<Target>>]>([:])

    init(granularity: TimeAmount) {
        self.granularity = granularity
    }

    /// The wheel of `loop`; call on `loop`.
    func wheel(on loop: any EventLoop) -> LoopTimerWheel<Target> {
        let key = ObjectIdentifier(loop as AnyObject)
        return wheels.withLock { wheels in
            if let bound = wheels[key] { return bound.value }
            let wheel = LoopTimerWheel<Target>(loop: loop, granularity: granularity)
            wheels[key] = NIOLoopBound(wheel, eventLoop: loop)
            return wheel
        }
    }
}
