import Foundation
import Synchronization

/// Send times per room and sequence number, and the latencies the receivers saw.
final class LatencyRecorder: Sendable {
    private struct Room {
        var sentAt: [UInt64] = []
        var latencies: [Double] = []
    }

    /// One mutex per room: a sender and its receiver touch only their room's record.
    private final class Record: Sendable {
        let state = Mutex(Room())
    }

    private let rooms: [Record]

    init(rooms: Int) {
        self.rooms = (0..<rooms).map { _ in Record() }
    }

    func sent(room: Int, sequence: Int) {
        let now = DispatchTime.now().uptimeNanoseconds
        rooms[room].state.withLock { record in
            if record.sentAt.count <= sequence { record.sentAt.append(contentsOf: repeatElement(0, count: sequence - record.sentAt.count + 1)) }
            record.sentAt[sequence] = now
        }
    }

    /// Takes an event frame's text; only `element:updated` frames count.
    func received(_ text: String, room: Int) {
        guard text.hasPrefix(#"42["element:updated""#), let range = text.range(of: #""positionY":"#) else { return }
        let digits = text[range.upperBound...].prefix { $0.isNumber }
        guard let sequence = Int(digits) else { return }
        let now = DispatchTime.now().uptimeNanoseconds
        rooms[room].state.withLock { record in
            guard sequence < record.sentAt.count, record.sentAt[sequence] > 0 else { return }
            record.latencies.append(Double(now - record.sentAt[sequence]) / 1e9)
        }
    }

    struct Summary {
        var sent: Int
        var received: Int
        var p50: Double
        var p90: Double
        var p99: Double
        var max: Double
    }

    func summary(seconds: Double) -> Summary {
        var sent = 0
        var latencies: [Double] = []
        for room in rooms {
            room.state.withLock { record in
                sent += record.sentAt.count
                latencies.append(contentsOf: record.latencies)
            }
        }
        latencies.sort()
        func percentile(_ p: Double) -> Double {
            latencies.isEmpty ? 0 : latencies[min(latencies.count - 1, Int(Double(latencies.count) * p))]
        }
        return Summary(sent: sent, received: latencies.count, p50: percentile(0.5), p90: percentile(0.9), p99: percentile(0.99), max: latencies.last ?? 0)
    }
}

/// CPU seconds a process has used, from `/proc/<pid>/stat`.
enum ProcessCPU {
    static func seconds(_ pid: Int32) -> Double {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return 0 }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        // utime and stime are fields 14 and 15 of the whole line: 12 and 13 after the name.
        guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }
}
