import Foundation
import Synchronization

#if canImport(Glibc)
public import Glibc
#endif

/// A child process started with `posix_spawn`, with default signal handling and an empty signal
/// mask.
///
/// Foundation's `Process` passes on the mask of the thread that spawns it, and dispatch's threads
/// block SIGTERM: a server started that way ignores `terminate()`. Tests need real signals (a
/// graceful stop, a SIGKILL), so they spawn children here.
public final class ChildProcess: Sendable {
    /// The child's process id.
    public let pid: pid_t
    // Once reaped, a pid cannot be waited for again: the status is kept here. A mutex, because
    // tests poll from whichever task asks.
    private let exitCode = Mutex<Int32?>(nil)

    /// Starts `executable` with `arguments`; output goes to `outputPath` (or nowhere).
    public init(executable: String, arguments: [String], environment: [String: String]? = nil, outputPath: String? = nil) throws {
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var emptyMask = sigset_t()
        sigemptyset(&emptyMask)
        var defaultSignals = sigset_t()
        sigfillset(&defaultSignals)
        posix_spawnattr_setsigmask(&attributes, &emptyMask)
        posix_spawnattr_setsigdefault(&attributes, &defaultSignals)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        let output = outputPath ?? "/dev/null"
        posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)

        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let environmentPairs = (environment ?? ProcessInfo.processInfo.environment).map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { environmentPairs.forEach { free($0) } }

        var pid = pid_t()
        let status = posix_spawn(&pid, executable, &actions, &attributes, argv, environmentPairs)
        guard status == 0 else {
            throw ChildProcessError("cannot start \(executable): \(String(cString: strerror(status)))")
        }
        self.pid = pid
    }

    /// Sends a signal (SIGTERM by default).
    public func signal(_ signal: Int32 = SIGTERM) {
        kill(pid, signal)
    }

    /// True while the child has not exited (and reaps it once it has).
    public var isRunning: Bool {
        poll() == nil
    }

    /// The exit status once the child has exited (128 + signal when a signal ended it).
    private func poll() -> Int32? {
        if let status = exitCode.withLock({ $0 }) { return status }
        var status: Int32 = 0
        guard waitpid(pid, &status, WNOHANG) == pid else { return nil }
        // WIFEXITED / WEXITSTATUS / WTERMSIG are macros Swift does not import.
        let signal = status & 0x7f
        let code = signal == 0 ? (status >> 8) & 0xff : 128 + signal
        exitCode.withLock { $0 = code }
        return code
    }

    /// Waits for the child to exit and returns its status, sending SIGKILL after `timeout`.
    public func exitStatus(timeout: Duration = .seconds(10)) async -> Int32 {
        await wait(timeout: timeout)
        return poll() ?? -1
    }

    /// Waits for the child to exit, sending SIGKILL if it outlives `timeout`.
    public func wait(timeout: Duration = .seconds(10)) async {
        let deadline = ContinuousClock.now + timeout
        while isRunning {
            if ContinuousClock.now >= deadline {
                kill(pid, SIGKILL)
            }
            try? await Task.sleep(for: .milliseconds(5))
        }
    }

    /// Sends SIGTERM and waits for the child to exit.
    public func terminate(timeout: Duration = .seconds(10)) async {
        signal(SIGTERM)
        await wait(timeout: timeout)
    }
}

/// Why a child process could not be started.
public struct ChildProcessError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
