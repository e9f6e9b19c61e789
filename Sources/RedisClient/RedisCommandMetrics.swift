import Metrics
import NIOCore
import Synchronization

/// A client's command metrics by command name, made once per name and kept: a command looks its
/// instruments up under one lock, with no allocation once the name has been seen.
///
/// - `redis_command_duration_seconds{command}` (histogram): from the call until the reply or the
///   failure, the wait for a connection included.
/// - `redis_command_errors_total{command}`: commands that failed (error reply, timeout, lost
///   connection).
///
/// Both after ``RedisConfiguration/metricsPrefix``.
///
/// `command` is the command word in lower case (`get`, `publish`), a library function's name for
/// ``RedisClientProtocol/call(_:timeout:durability:)`` (`element_create`), and for a pipeline the
/// word its commands share or `pipeline`. Past ``maximumNames`` distinct names, others count as
/// `other`, so a caller sending arbitrary words cannot grow the label set without bound.
final class RedisCommandMetrics: Sendable {
    /// The histogram of command durations, after the prefix.
    static let durationLabel = "redis_command_duration_seconds"
    /// The counter of failed commands, after the prefix.
    static let errorsLabel = "redis_command_errors_total"
    /// The most label values one client makes.
    static let maximumNames = 64

    private let prefix: String

    /// - Parameter prefix: put before every label (``RedisConfiguration/metricsPrefix``).
    init(prefix: String) {
        self.prefix = prefix
    }

    /// One command name's instruments.
    struct Instruments: Sendable {
        let duration: CoreMetrics.Timer
        let errors: CoreMetrics.Counter

        /// Records a command that began at `start` and succeeded.
        func succeeded(since start: NIODeadline) {
            duration.recordNanoseconds((NIODeadline.now() - start).nanoseconds)
        }

        /// Records a command that began at `start` and failed.
        func failed(since start: NIODeadline) {
            succeeded(since: start)
            errors.increment()
        }

        /// Counts each error reply of a pipeline as a failed command, as it would be sent alone.
        func countErrors(in replies: [RedisReply]) {
            for case .error in replies {
                errors.increment()
            }
        }
    }

    private let byName = Mutex<[String: Instruments]>([:])

    /// The instruments of command (or function) `name`, made on first use.
    func instruments(for name: String) -> Instruments {
        byName.withLock { byName in
            if let known = byName[name] { return known }
            let label = byName.count < Self.maximumNames ? name.lowercased() : "other"
            let made = Instruments(
                duration: CoreMetrics.Timer(label: prefix + Self.durationLabel, dimensions: [("command", label)]),
                errors: CoreMetrics.Counter(label: prefix + Self.errorsLabel, dimensions: [("command", label)])
            )
            byName[name] = made
            return made
        }
    }

    /// The instruments of a pipeline: its commands' shared word, or `pipeline` for a mix.
    func instruments(for commands: [RedisCommand]) -> Instruments {
        guard let first = commands.first?.name else { return instruments(for: "pipeline") }
        return instruments(for: commands.allSatisfy { $0.name == first } ? first : "pipeline")
    }
}
