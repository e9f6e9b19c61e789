import Foundation

/// CPU time and resident memory of a process, read from `/proc/<pid>`.
struct ProcessStats: Sendable {
    var cpuSeconds: Double
    var rssBytes: Int

    init(pid: Int32) {
        cpuSeconds = Self.cpuSeconds(pid)
        rssBytes = Self.rssBytes(pid)
    }

    /// utime + stime from `/proc/<pid>/stat`.
    private static func cpuSeconds(_ pid: Int32) -> Double {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return 0 }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        // utime and stime are fields 14 and 15 of the whole line: 12 and 13 after the name.
        guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// `VmRSS` from `/proc/<pid>/status`.
    private static func rssBytes(_ pid: Int32) -> Int {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return 0 }
        for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            let kilobytes = line.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
            return kilobytes * 1024
        }
        return 0
    }

    /// Stats of every pid.
    static func read(_ pids: [Int32]) -> [ProcessStats] { pids.map(ProcessStats.init(pid:)) }

    /// CPU seconds the processes used between two readings.
    static func cpuUsed(from before: [ProcessStats], to after: [ProcessStats]) -> Double {
        zip(before, after).map { $1.cpuSeconds - $0.cpuSeconds }.reduce(0, +)
    }
}
