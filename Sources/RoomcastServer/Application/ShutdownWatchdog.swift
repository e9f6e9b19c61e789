import Foundation
import Logging
import RoomcastCore
import ServiceLifecycle

/// Ends the process when a graceful shutdown has not finished `limit` after it began: a last
/// resort, so that no stall inside the process can keep a SIGTERM from ending it.
///
/// The stall it was written for: swift-async-algorithms 1.1.4's `merge`, which Hummingbird's date
/// cache uses through `cancelOnGracefulShutdown()`, can leave its lock held by no thread when the
/// service group cancels it, and both event loops then wait on
/// it forever. The watchdog is a thread of its own, not a task, so it runs when no event loop can.
struct ShutdownWatchdog: Service {
    /// How long a shutdown may take: the drain timeout and a margin for the services after it.
    let limit: Duration
    let logger: Logger
    /// What ends the process; tests record the call instead.
    var onStall: @Sendable () -> Void = { _exit(70) }

    func run() async {
        // Returns once a graceful shutdown begins, or throws when the group is cancelled: then
        // the process is ending without one, and there is nothing to watch.
        do {
            try await gracefulShutdown()
        } catch {
            return
        }
        let (limit, logger, onStall) = (limit, logger, onStall)
        Thread.detachNewThread {
            Thread.sleep(forTimeInterval: Double(limit.wholeMilliseconds) / 1000)
            logger.critical("graceful shutdown stalled: ending the process", metadata: ["limit_ms": "\(limit.wholeMilliseconds)"])
            onStall()
        }
    }
}
