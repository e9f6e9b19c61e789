import Logging
import Synchronization
import Testing

@testable import RedisClient

@Suite("Reconnection: the one retry loop of the pool, the subscriber and the slot map")
struct ReconnectionTests {
    private static let reconnection = Reconnection(
        backoff: Backoff(initial: .microseconds(10), maximum: .microseconds(10)),
        logger: Logger(label: "test.reconnection"),
        failureMessage: "failed, retrying"
    )

    @Test("retries until the attempt succeeds, reporting each failure and how many there were")
    func retriesUntilSuccess() async {
        let attempts = Mutex(0)
        let seen = Mutex<[RedisError.Code]>([])
        let result = await Self.reconnection.retry { () throws(RedisError) -> String in
            let attempt = attempts.withLock { $0 += 1; return $0 }
            if attempt < 4 { throw RedisError(.connectionFailed, "refused") }
            return "connected"
        } onFailure: { error in
            seen.withLock { $0.append(error.code) }
        }
        #expect(result?.value == "connected")
        #expect(result?.failures == 3)
        #expect(seen.withLock { $0 } == [.connectionFailed, .connectionFailed, .connectionFailed])
    }

    @Test("a shut-down owner ends the loop at once, without counting a failure")
    func stopsOnShutdown() async {
        let failures = Mutex(0)
        let result = await Self.reconnection.retry { () throws(RedisError) -> Int in
            throw RedisError(.clientShutdown, "shut down")
        } onFailure: { _ in
            failures.withLock { $0 += 1 }
        }
        #expect(result == nil)
        #expect(failures.withLock { $0 } == 0)
    }

    @Test("a cancelled task ends the loop even while Redis keeps failing")
    func stopsOnCancellation() async {
        let failures = Mutex(0)
        let task = Task {
            await Self.reconnection.retry { () throws(RedisError) -> Int in
                throw RedisError(.connectionFailed, "refused")
            } onFailure: { _ in
                failures.withLock { $0 += 1 }
            }
        }
        // Cancel only once it has failed at least once, so the loop is really running.
        while failures.withLock({ $0 }) == 0 { await Task.yield() }
        task.cancel()
        #expect(await task.value == nil)
    }
}
