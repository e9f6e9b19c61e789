#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import Metrics
import Synchronization

/// The process's own figures, read from the kernel when `/metrics` is scraped: CPU time, resident
/// memory, open and allowed file descriptors (one per socket, so the descriptor limit is the
/// node's socket limit). Read from `/proc/self`; elsewhere than Linux they stay at 0.
enum ProcessMetrics {
    /// `roomcast_process_cpu_seconds_total`: user and system CPU time, counted up by what was
    /// spent since the last scrape.
    static let cpuSeconds = FloatingPointCounter(label: "roomcast_process_cpu_seconds_total")
    /// `roomcast_process_resident_memory_bytes`.
    static let residentMemory = Meter(label: "roomcast_process_resident_memory_bytes")
    /// `roomcast_process_open_fds`.
    static let openDescriptors = Meter(label: "roomcast_process_open_fds")
    /// `roomcast_process_max_fds`: the soft limit of open descriptors.
    static let maxDescriptors = Meter(label: "roomcast_process_max_fds")

    /// The CPU seconds already counted.
    private static let countedCPU = Mutex<Double>(0)

    /// Reads the figures now; called before each scrape is rendered.
    static func update() {
        if let cpu = readCPUSeconds() {
            let delta = countedCPU.withLock { counted in
                defer { counted = max(counted, cpu) }
                return cpu - counted
            }
            if delta > 0 { cpuSeconds.increment(by: delta) }
        }
        if let resident = readResidentBytes() { residentMemory.set(resident) }
        if let open = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") {
            // Less the descriptor the listing itself held open.
            openDescriptors.set(max(open.count - 1, 0))
        }
        var limit = rlimit()
        if getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 { maxDescriptors.set(Double(limit.rlim_cur)) }
    }

    /// utime + stime of `/proc/self/stat` (fields 14 and 15, in clock ticks), in seconds.
    static func readCPUSeconds() -> Double? {
        guard let stat = try? String(contentsOfFile: "/proc/self/stat", encoding: .utf8),
              let end = stat.lastIndex(of: ")")
        else { return nil }
        // After the command name, in parentheses (which may hold spaces), come fields 3 onwards.
        let fields = stat[stat.index(after: end)...].split(separator: " ")
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        return ticks > 0 ? (user + system) / ticks : nil
    }

    /// The resident set of `/proc/self/statm` (its second field, in pages), in bytes.
    static func readResidentBytes() -> Double? {
        guard let statm = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return nil }
        let fields = statm.split(separator: " ")
        guard fields.count > 1, let pages = Double(fields[1]) else { return nil }
        return pages * Double(sysconf(Int32(_SC_PAGESIZE)))
    }
}
