import Testing

@testable import RedisClient

@Suite("ConnectionPoolStateMachine")
struct ConnectionPoolStateMachineTests {
    /// Stands in for a connection; only its identity matters.
    final class FakeConnection: CustomStringConvertible {
        let name: String
        init(_ name: String) { self.name = name }
        var description: String { name }
    }

    typealias Pool = ConnectionPoolStateMachine<FakeConnection, String>

    private static func used(_ action: Pool.LeaseAction) -> FakeConnection? {
        if case .use(let connection) = action { return connection }
        return nil
    }

    private static func waits(_ action: Pool.LeaseAction) -> Bool {
        if case .wait = action { return true }
        return false
    }

    private static func failure(_ action: Pool.LeaseAction) -> RedisError? {
        if case .fail(let error) = action { return error }
        return nil
    }

    @Test("with no connection a lease waits, and registers the waiter only when given one")
    func leaseWithoutConnection() {
        var pool = Pool(size: 2)
        #expect(Self.waits(pool.lease()))
        #expect(pool.waiterTimedOut(id: 0) == nil)
        #expect(Self.waits(pool.lease(waiter: "a", id: 1)))
        #expect(Self.waits(pool.lease(waiter: "b", id: 2)))
        #expect(pool.openConnections == 0)

        let connection = FakeConnection("c0")
        let served = pool.connected(slot: 1, connection)
        #expect(served.map(Set.init) == ["a", "b"])
        #expect(pool.openConnections == 1)
        #expect(Self.used(pool.lease()) === connection)
        // Served waiters are gone: a later connection hands back nobody.
        #expect(pool.connected(slot: 0, FakeConnection("c1")) == [])
    }

    @Test("a lease with an open connection uses it and does not register the waiter")
    func leaseWithConnection() {
        var pool = Pool(size: 1)
        let connection = FakeConnection("c0")
        #expect(pool.connected(slot: 0, connection) == [])
        #expect(Self.used(pool.lease(waiter: "w", id: 5)) === connection)
        #expect(pool.waiterTimedOut(id: 5) == nil)
    }

    @Test("leases rotate over open connections and skip closed slots")
    func roundRobin() {
        var pool = Pool(size: 3)
        let first = FakeConnection("c0")
        let second = FakeConnection("c2")
        _ = pool.connected(slot: 0, first)
        _ = pool.connected(slot: 2, second)
        let leased = (0..<6).map { _ in Self.used(pool.lease()) }
        #expect(leased.map { $0?.name } == ["c0", "c2", "c0", "c2", "c0", "c2"])

        pool.disconnected(slot: 0, first, error: RedisError(.connectionClosed, "gone"))
        #expect(pool.openConnections == 1)
        #expect((0..<3).allSatisfy { _ in Self.used(pool.lease()) === second })
    }

    @Test("a lease takes the connection it prefers (its caller's event loop's) while it is open, else the next one round-robin")
    func preferredConnection() {
        var pool = Pool(size: 3)
        let (first, second, third) = (FakeConnection("c0"), FakeConnection("c1"), FakeConnection("c2"))
        _ = pool.connected(slot: 0, first)
        _ = pool.connected(slot: 1, second)
        _ = pool.connected(slot: 2, third)
        let leased = (0..<3).map { _ in Self.used(pool.lease(preferring: { $0 === second })) }
        #expect(leased.map { $0?.name } == ["c1", "c1", "c1"])
        // The others still rotate as if the preferred leases had not happened.
        #expect((0..<3).map { _ in Self.used(pool.lease())?.name } == ["c0", "c1", "c2"])

        pool.disconnected(slot: 1, second, error: RedisError(.connectionClosed, "gone"))
        #expect((0..<2).map { _ in Self.used(pool.lease(preferring: { $0 === second }))?.name } == ["c0", "c2"])
    }

    @Test("a stale connection's disconnect leaves the slot's new connection in place")
    func staleDisconnect() {
        var pool = Pool(size: 1)
        let old = FakeConnection("old")
        let new = FakeConnection("new")
        _ = pool.connected(slot: 0, old)
        _ = pool.connected(slot: 0, new)
        pool.disconnected(slot: 0, old, error: RedisError(.connectionClosed, "late close of old"))
        #expect(pool.openConnections == 1)
        #expect(Self.used(pool.lease()) === new)

        pool.disconnected(slot: 0, new, error: RedisError(.connectionClosed, "closed"))
        #expect(pool.openConnections == 0)
        #expect(Self.waits(pool.lease()))
    }

    @Test("a timed-out waiter is handed back once, then never again")
    func waiterTimedOut() {
        var pool = Pool(size: 1)
        _ = pool.lease(waiter: "w", id: 7)
        #expect(pool.waiterTimedOut(id: 7) == "w")
        #expect(pool.waiterTimedOut(id: 7) == nil)
        #expect(pool.connected(slot: 0, FakeConnection("c0")) == [])
    }

    @Test("a waiter a connection served first is not handed back on timeout")
    func servedWaiterNotTimedOut() {
        var pool = Pool(size: 1)
        _ = pool.lease(waiter: "x", id: 8)
        #expect(pool.connected(slot: 0, FakeConnection("c0")) == ["x"])
        #expect(pool.waiterTimedOut(id: 8) == nil)
    }

    @Test("lastError remembers why there is no connection until one opens")
    func lastError() {
        var pool = Pool(size: 1)
        #expect(pool.lastError == nil)
        pool.connectFailed(RedisError(.connectionFailed, "refused"))
        #expect(pool.lastError?.code == .connectionFailed)
        let connection = FakeConnection("c0")
        _ = pool.connected(slot: 0, connection)
        #expect(pool.lastError == nil)
        pool.disconnected(slot: 0, connection, error: RedisError(.connectionClosed, "reset"))
        #expect(pool.lastError?.code == .connectionClosed)
    }

    @Test("shutdown returns the open connections")
    func shutdownReturnsConnections() {
        var pool = Pool(size: 3)
        let first = FakeConnection("c0")
        let second = FakeConnection("c1")
        _ = pool.connected(slot: 0, first)
        _ = pool.connected(slot: 1, second)
        let (connections, waiters) = pool.shutdown()
        #expect(connections.count == 2)
        #expect(connections.contains { $0 === first } && connections.contains { $0 === second })
        #expect(waiters.isEmpty)
        #expect(pool.openConnections == 0)
    }

    @Test("shutdown returns the waiters; afterwards leases fail and new connections are refused")
    func shutdownReturnsWaiters() {
        var pool = Pool(size: 2)
        _ = pool.lease(waiter: "a", id: 1)
        _ = pool.lease(waiter: "b", id: 2)
        let (connections, waiters) = pool.shutdown()
        #expect(connections.isEmpty)
        #expect(Set(waiters) == ["a", "b"])
        #expect(pool.waiterTimedOut(id: 1) == nil)

        #expect(Self.failure(pool.lease())?.code == .clientShutdown)
        #expect(Self.failure(pool.lease(waiter: "late", id: 3))?.code == .clientShutdown)
        #expect(pool.waiterTimedOut(id: 3) == nil)
        #expect(pool.connected(slot: 0, FakeConnection("c0")) == nil)
        #expect(pool.openConnections == 0)
        #expect(pool.shutdown().connections.isEmpty)
    }

    @Test("a pool that fails fast: waiters fail when a connection attempt fails, leases fail until one succeeds")
    func failsFastWhileUnreachable() {
        var pool = ConnectionPoolStateMachine<FakeConnection, String>(size: 2, failsFast: true)
        #expect(Self.waits(pool.lease(waiter: "a", id: 1)))
        let refused = RedisError(.connectionFailed, "cannot connect to 127.0.0.1:1")
        let failed = pool.connectFailed(refused)
        #expect(failed?.waiters == ["a"])
        #expect(failed?.error.code == .connectionFailed)
        #expect(Self.failure(pool.lease(waiter: "b", id: 2))?.message == refused.message)
        #expect(pool.waiterTimedOut(id: 2) == nil)
        _ = pool.connected(slot: 0, FakeConnection("c0"))
        #expect(Self.used(pool.lease()) != nil)
    }

    @Test("a pool that does not fail fast keeps its waiters through failed attempts")
    func waitsWhileUnreachable() {
        var pool = ConnectionPoolStateMachine<FakeConnection, String>(size: 1)
        #expect(Self.waits(pool.lease(waiter: "a", id: 1)))
        #expect(pool.connectFailed(RedisError(.connectionFailed, "refused")) == nil)
        #expect(Self.waits(pool.lease(waiter: "b", id: 2)))
    }
}
