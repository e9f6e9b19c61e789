/// The bookkeeping of ``RedisClient``'s pool, free of I/O so that tests can drive it directly.
///
/// Each slot holds at most one open connection; a slot's own task reconnects it. Callers lease
/// any open connection round-robin (connections are shared, not exclusive) or wait for one.
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
    /// Why the pool has no connection, for the errors of callers that waited in vain.
    private(set) var lastError: RedisError?

    init(size: Int) {
        precondition(size > 0, "a pool needs at least one connection")
        slots = Array(repeating: nil, count: size)
    }

    /// True once ``shutdown()`` ran: slots stop reconnecting.
    var isStopped: Bool { isShutdown }

    /// The number of open connections.
    var openConnections: Int { slots.reduce(0) { $0 + ($1 == nil ? 0 : 1) } }

    /// Picks an open connection; when there is none, registers `waiter` (if given) under `id`
    /// until one opens.
    mutating func lease(waiter: Waiter? = nil, id: Int = 0) -> LeaseAction {
        if isShutdown { return .fail(RedisError(.clientShutdown, "the Redis client was shut down")) }
        for offset in 0..<slots.count {
            let index = (nextSlot + offset) % slots.count
            if let connection = slots[index] {
                nextSlot = (index + 1) % slots.count
                return .use(connection)
            }
        }
        if let waiter { waiters[id] = waiter }
        return .wait
    }

    /// A slot connected: every waiter gets this connection. Returns `nil` after shutdown, when
    /// the caller must close the new connection instead.
    mutating func connected(slot: Int, _ connection: Connection) -> [Waiter]? {
        if isShutdown { return nil }
        slots[slot] = connection
        lastError = nil
        defer { waiters.removeAll() }
        return Array(waiters.values)
    }

    /// A slot's connection closed.
    mutating func disconnected(slot: Int, _ connection: Connection, error: RedisError) {
        if slots[slot] === connection { slots[slot] = nil }
        lastError = error
    }

    /// A connection attempt failed.
    mutating func connectFailed(_ error: RedisError) {
        lastError = error
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
