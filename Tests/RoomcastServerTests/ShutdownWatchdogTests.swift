import Logging
import ServiceLifecycle
import Synchronization
import Testing

@testable import RoomcastServer

/// The last resort against a shutdown that hangs inside the process (a deadlocked library, a
/// service that ignores cancellation): a thread ends the process `limit` after SIGTERM.
@Suite("ShutdownWatchdog")
struct ShutdownWatchdogTests {
    /// A service that neither finishes on a graceful shutdown nor on cancellation until released:
    /// a stall of the kind the watchdog is for.
    final class StuckService: Service, Sendable {
        private let waiting = Mutex<CheckedContinuation<Void, Never>?>(nil)
        private let released = Atomic<Bool>(false)

        func run() async {
            await withCheckedContinuation { continuation in
                let resumeNow = waiting.withLock { waiting -> Bool in
                    if released.load(ordering: .relaxed) { return true }
                    waiting = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        }

        func release() {
            released.store(true, ordering: .relaxed)
            waiting.withLock { $0.take() }?.resume()
        }
    }

    @Test("a graceful shutdown still stuck after the limit ends the process", .timeLimit(.minutes(1)))
    func endsAStalledShutdown() async throws {
        let (stalls, stalled) = AsyncStream.makeStream(of: Void.self)
        let watchdog = ShutdownWatchdog(limit: .milliseconds(200), logger: Logger(label: "test.watchdog"), onStall: { stalled.yield() })
        let stuck = StuckService()
        let group = ServiceGroup(configuration: .init(services: [stuck, watchdog], logger: Logger(label: "test.group")))
        let running = Task { try await group.run() }
        await group.triggerGracefulShutdown()
        var iterator = stalls.makeAsyncIterator()
        #expect(await iterator.next() != nil)
        stuck.release()
        try await running.value
    }

    @Test("a group cancelled without a graceful shutdown arms nothing: the watchdog just returns", .timeLimit(.minutes(1)))
    func returnsOnCancellation() async throws {
        let (stalls, stalled) = AsyncStream.makeStream(of: Void.self)
        let watchdog = ShutdownWatchdog(limit: .milliseconds(1), logger: Logger(label: "test.watchdog"), onStall: { stalled.yield() })
        let group = ServiceGroup(configuration: .init(services: [watchdog], logger: Logger(label: "test.group")))
        let running = Task { try await group.run() }
        running.cancel()
        _ = try? await running.value
        // An armed watchdog would have fired 1 ms in; give a thread ample time to show it did.
        try await Task.sleep(for: .milliseconds(200))
        stalled.finish()
        var iterator = stalls.makeAsyncIterator()
        #expect(await iterator.next() == nil)
    }
}
