import NIOCore
import Synchronization

/// Waiter ids, unique in the process: a waiter and its deadline timer find each other by one.
private let waiterIDs = Atomic<Int>(0)

/// Callers waiting for what their owner completes for all of them at once (a connection, a slot
/// map, a subscription), each failed with `timeout` at its own deadline if still waiting then:
/// the one waiter-with-deadline of the pool, the cluster client and the subscriber.
///
/// Kept in the owner's locked state and used under the owner's lock; ``expire(_:at:on:waitingFor:take:)``
/// arms the deadline.
struct DeadlineWaiters<Value: Sendable> {
    private var waiting: [Int: EventLoopPromise<Value>] = [:]

    /// A fresh waiter id.
    static func newID() -> Int {
        waiterIDs.wrappingAdd(1, ordering: .relaxed).newValue
    }

    /// Adds a waiter; returns its id, for ``expire(_:at:on:waitingFor:take:)``.
    mutating func add(_ promise: EventLoopPromise<Value>) -> Int {
        let id = Self.newID()
        waiting[id] = promise
        return id
    }

    /// Takes waiter `id` if it is still waiting.
    mutating func take(_ id: Int) -> EventLoopPromise<Value>? {
        waiting.removeValue(forKey: id)
    }

    /// Takes every waiter, to be served or failed outside the lock.
    mutating func takeAll() -> [EventLoopPromise<Value>] {
        defer { waiting.removeAll() }
        return Array(waiting.values)
    }

    /// Arms waiter `id`'s deadline: at `deadline`, `take` removes the waiter under its owner's
    /// lock (nil when it was served meanwhile) and returns the owner's last error, and the waiter
    /// fails with `timeout`: "`what` in time (last error)".
    static func expire(
        _ id: Int, at deadline: NIODeadline, on eventLoop: any EventLoop, waitingFor what: @autoclosure @escaping @Sendable () -> String,
        take: @escaping @Sendable (Int) -> (EventLoopPromise<Value>?, RedisError?)
    ) {
        eventLoop.scheduleTask(deadline: deadline) {
            let (waiter, lastError) = take(id)
            let reason = lastError.map { " (\($0.message))" } ?? ""
            waiter?.fail(RedisError(.timeout, "\(what()) in time\(reason)", underlying: lastError?.underlying))
        }
    }
}
