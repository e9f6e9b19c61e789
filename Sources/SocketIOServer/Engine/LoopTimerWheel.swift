import NIOCore
import Synchronization

/// The deadlines of every Engine.IO session on one event loop, served by one repeating timer.
///
/// A timer per session costs each idle socket a heap entry in NIO's scheduler, a wake-up of
/// its own for every ping and a cancel (a linear search of that heap) for every pong: measured
/// on a node holding 5,000 idle sockets, those were most of its CPU. Here the loop wakes once
/// per `granularity` and serves the sessions due in that slot of a ring, as uWebSockets buckets
/// its timeouts. A deadline is met up to one `granularity` late, which is why it is a small
/// part of the ping timeout (see ``EngineIOSettings/timerGranularity``).
///
/// Sessions are not removed when their deadline moves: each arms with a new generation, and an
/// entry whose generation is no longer its session's (or whose session is gone) is dropped when
/// its slot comes up. Confined to its loop.
final class LoopTimerWheel {
    private struct Entry {
        /// Weak: an entry outlives its session's end by up to a ping interval, and must not keep
        /// a closed connection's objects alive that long (a client that connects and leaves fast
        /// would hold a node's memory).
        weak var session: (any LoopTimerTarget)?
        let generation: UInt64
        let deadline: NIODeadline
    }

    private let loop: any EventLoop
    private let granularity: TimeAmount
    private var slots: [[Entry]]
    /// The slot served next, and the time up to which it covers.
    private var cursor = 0
    private var cursorEnd: NIODeadline
    private var count = 0
    private var ticker: RepeatedTask?

    init(loop: any EventLoop, granularity: TimeAmount, slotCount: Int = 64) {
        self.loop = loop
        self.granularity = granularity
        self.slots = Array(repeating: [], count: slotCount)
        self.cursorEnd = .now() + granularity
    }

    /// Calls `session.timerFired(generation:)` once `deadline` has passed (at most one
    /// granularity later).
    func schedule(_ session: any LoopTimerTarget, generation: UInt64, at deadline: NIODeadline) {
        if ticker == nil { start() }
        insert(Entry(session: session, generation: generation, deadline: deadline))
        count += 1
    }

    private func insert(_ entry: Entry) {
        // Slots ahead of the cursor by whole granularities; one past the ring waits in the last
        // slot and is put back until it is due.
        let late = (entry.deadline - cursorEnd).nanoseconds
        let ahead = late <= 0 ? 0 : (late + granularity.nanoseconds - 1) / granularity.nanoseconds
        let offset = Int(min(ahead, Int64(slots.count - 1)))
        slots[(cursor + offset) % slots.count].append(entry)
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
            let due = slots[cursor]
            slots[cursor] = []
            cursor = (cursor + 1) % slots.count
            let slotEnd = cursorEnd
            cursorEnd = cursorEnd + granularity
            for entry in due {
                count -= 1
                guard let session = entry.session else { continue }
                if entry.deadline > slotEnd {
                    insert(entry)
                    count += 1
                } else {
                    session.timerFired(generation: entry.generation)
                }
            }
        }
        if count == 0 {
            ticker?.cancel()
            ticker = nil
        }
    }

    /// No entry is waiting and the loop's timer is stopped.
    var isIdle: Bool { count == 0 && ticker == nil }
}

/// What a ``LoopTimerWheel`` serves: a session's deadlines.
protocol LoopTimerTarget: AnyObject {
    /// An entry scheduled with `generation` is due; only the target's latest generation counts.
    func timerFired(generation: UInt64)
}

extension EngineIOSession: LoopTimerTarget {}

@available(*, unavailable)
extension LoopTimerWheel: Sendable {}

/// One ``LoopTimerWheel`` per event loop, made when a loop's first session arms.
final class LoopTimerWheels: Sendable {
    private let granularity: TimeAmount
    private let wheels = Mutex<[ObjectIdentifier: NIOLoopBound<LoopTimerWheel>]>([:])

    init(granularity: TimeAmount) {
        self.granularity = granularity
    }

    /// The wheel of `loop`; call on `loop`.
    func wheel(on loop: any EventLoop) -> LoopTimerWheel {
        let key = ObjectIdentifier(loop as AnyObject)
        return wheels.withLock { wheels in
            if let bound = wheels[key] { return bound.value }
            let wheel = LoopTimerWheel(loop: loop, granularity: granularity)
            wheels[key] = NIOLoopBound(wheel, eventLoop: loop)
            return wheel
        }
    }
}
