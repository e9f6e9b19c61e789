import ArgumentParser
import Dispatch
import Foundation
import NIOCore
import NIOPosix

/// The process entry point.
@main
enum Main {
    static func main() {
        // Swift Concurrency's jobs run on NIO's event loops instead of a thread pool of their
        // own: a task awaiting Redis resumes on a loop thread, with no hop to another thread and
        // back. Must happen before the first task; blocking work goes to `NIOThreadPool`.
        _ = NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()
        Task {
            await RoomcastCommand.main()
            exit(0)
        }
        dispatchMain()
    }
}
