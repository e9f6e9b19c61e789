import Foundation
import Synchronization

/// Send times per room and sequence number, and the latencies the receivers saw.
final class LatencyRecorder: Sendable {
    private struct Room {
        var sentAt: [UInt64] = []
        var latencies: [Double] = []
    }

    /// One mutex per room: a sender and its receivers touch only their room's record.
    private final class Record: Sendable {
        let state = Mutex(Room())
    }

    private let rooms: [Record]
    /// The sequence number an event frame carries, or nil for a frame that is not measured.
    private let sequence: @Sendable (String) -> Int?

    init(rooms: Int, sequence: @escaping @Sendable (String) -> Int?) {
        self.rooms = (0..<rooms).map { _ in Record() }
        self.sequence = sequence
    }

    /// The digits that follow `marker` in `text`, as a number: how senders tag their frames.
    static func number(after marker: String, in text: String) -> Int? {
        guard let range = text.range(of: marker) else { return nil }
        return Int(text[range.upperBound...].prefix { $0.isNumber })
    }

    func sent(room: Int, sequence: Int) {
        let now = DispatchTime.now().uptimeNanoseconds
        rooms[room].state.withLock { record in
            if record.sentAt.count <= sequence { record.sentAt.append(contentsOf: repeatElement(0, count: sequence - record.sentAt.count + 1)) }
            record.sentAt[sequence] = now
        }
    }

    /// Takes an event frame's text; frames without a sequence are not counted.
    func received(_ text: String, room: Int) {
        guard let sequence = sequence(text) else { return }
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

    func summary() -> Summary {
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
