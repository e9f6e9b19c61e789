/// The bookkeeping of ``RedisClient``'s pool, free of I/O so that tests can drive it directly.
///
/// Each slot holds at most one open connection; a slot's own task reconnects it. Callers lease
/// an open connection (connections are shared, not exclusive): the first one they prefer (the one
/// on their own event loop), else the next one round-robin; or they wait for one.
///
/// A pool that fails fast (a Redis Cluster master's) does not make callers wait while its server
/// is unreachable, that is while no connection is open and the last attempt to connect failed:
/// they fail at once, so a dead master costs its own slots' commands no more than a connection
/// attempt, and a caller waiting on it (a pipeline's part) does not hold up the others.
struct ConnectionPoolStateMachine<Connection: AnyObject, Waiter> {
    enum LeaseAction {
        case use(Connection)
        case wait
        case fail(RedisError)
    }

    private var slots: [Connection?]
    private var nextSlot = 0
    private var waiters: [Int: Waiter] = [:]
    private var isShutdown = false
    private let failsFast: Bool
    /// Set when a connection attempt fails, cleared when one succeeds.
    private var isUnreachable = false
    /// Why the pool has no connection, for the errors of callers that waited in vain.
    private(set) var lastError: RedisError?

    /// - Parameter failsFast: fail callers at once, instead of letting them wait, while the
    ///   server is unreachable.
    init(size: Int, failsFast: Bool = false) {
        precondition(size > 0, "a pool needs at least one connection")
        slots = Array(repeating: nil, count: size)
        self.failsFast = failsFast
    }

    /// The error callers get at once while the server is unreachable, if the pool fails fast.
    private var unreachableError: RedisError? {
        guard failsFast, isUnreachable, openConnections == 0 else { return nil }
        return RedisError(.connectionFailed, lastError?.message ?? "the server is unreachable", underlying: lastError?.underlying)
    }

    /// True once ``shutdown()`` ran: slots stop reconnecting.
    var isStopped: Bool { isShutdown }

    /// The number of open connections.
    var openConnections: Int { slots.reduce(0) { $0 + ($1 == nil ? 0 : 1) } }

    /// Picks an open connection, the first that `isPreferred` accepts if any; when there is none,
    /// registers `waiter` (if given) under `id` until one opens.
    mutating func lease(waiter: Waiter? = nil, id: Int = 0, preferring isPreferred: (Connection) -> Bool = { _ in false }) -> LeaseAction {
        if isShutdown { return .fail(RedisError(.clientShutdown, "the Redis client was shut down")) }
        for case let connection? in slots where isPreferred(connection) {
            return .use(connection)
        }
        for offset in 0..<slots.count {
            let index = (nextSlot + offset) % slots.count
            if let connection = slots[index] {
                nextSlot = (index + 1) % slots.count
                return .use(connection)
            }
        }
        if let error = unreachableError { return .fail(error) }
        if let waiter { waiters[id] = waiter }
        return .wait
    }

    /// A slot connected: every waiter gets this connection. Returns `nil` after shutdown, when
    /// the caller must close the new connection instead.
    mutating func connected(slot: Int, _ connection: Connection) -> [Waiter]? {
        if isShutdown { return nil }
        slots[slot] = connection
        lastError = nil
        isUnreachable = false
        defer { waiters.removeAll() }
        return Array(waiters.values)
    }

    /// A slot's connection closed.
    mutating func disconnected(slot: Int, _ connection: Connection, error: RedisError) {
        if slots[slot] === connection { slots[slot] = nil }
        lastError = error
    }

    /// A connection attempt failed. Returns the waiters to fail now (a pool failing fast with no
    /// open connection) with the error to fail them with.
    @discardableResult
    mutating func connectFailed(_ error: RedisError) -> (waiters: [Waiter], error: RedisError)? {
        lastError = error
        isUnreachable = true
        guard let failure = unreachableError, !waiters.isEmpty else { return nil }
        defer { waiters.removeAll() }
        return (Array(waiters.values), failure)
    }

    /// A waiter's deadline passed: hands it back to be failed, unless a connection served it first.
    mutating func waiterTimedOut(id: Int) -> Waiter? {
        waiters.removeValue(forKey: id)
    }

    /// Stops the pool: returns the connections to close and the waiters to fail.
    mutating func shutdown() -> (connections: [Connection], waiters: [Waiter]) {
        isShutdown = true
        let connections = slots.compactMap { $0 }
        let pending = Array(waiters.values)
        slots = slots.map { _ in nil }
        waiters.removeAll()
        return (connections, pending)
    }
}
