import Metrics
import NIOCore
import Synchronization
import WebSocketServer

/// Writes the events the node's subscriber forwards to one event loop's sockets in batches,
/// flushing each socket once per batch.
///
/// Events handed over before the loop gets to them (every pub/sub message read in one go, and
/// whatever arrives while the loop is busy) are written together: a socket that gets several in
/// one batch sends them with one `writev` instead of one `write` each. Under light load a batch
/// is one event, written at the loop's next turn; under load batches grow by themselves.
/// With `flushDelay`, a batch waits that long first so that more can join it (off by default:
/// it adds latency to every event; see the README's figures).
final class LoopWriteBatcher: Sendable {
    /// Writes one event to some of a loop's sockets (on that loop) and returns the connections
    /// it wrote to without flushing.
    typealias Write = @Sendable () -> [NIOLoopBound<WebSocketConnectionHandler>]

    private struct Batch {
        var writes: [Write] = []
    }

    private let batches = Mutex<[ObjectIdentifier: Batch]>([:])
    private let flushDelay: TimeAmount?

    /// - Parameter flushDelay: how long a batch waits for more events; nil writes it at the
    ///   loop's next turn.
    init(flushDelay: TimeAmount?) {
        self.flushDelay = flushDelay
    }

    /// Queues `write` for `loop`, scheduling the batch when it is the first of one.
    func post(on loop: any EventLoop, _ write: @escaping Write) {
        let key = ObjectIdentifier(loop)
        let first = batches.withLock { batches -> Bool in
            if batches[key] != nil {
                batches[key]!.writes.append(write)
                return false
            }
            batches[key] = Batch(writes: [write])
            return true
        }
        guard first else { return }
        if let flushDelay {
            loop.scheduleTask(in: flushDelay) { self.writeBatch(key) }
        } else {
            loop.execute { self.writeBatch(key) }
        }
    }

    /// On the loop: writes the batch's events in the order they came, then flushes each socket
    /// written to once.
    private func writeBatch(_ key: ObjectIdentifier) {
        let writes = batches.withLock { $0.removeValue(forKey: key)?.writes } ?? []
        var flushes = 0
        if writes.count == 1 {
            // The usual batch under light load: one event, each connection written to once.
            for connection in writes[0]() {
                connection.value.flush()
                flushes += 1
            }
        } else {
            var written: [ObjectIdentifier: WebSocketConnectionHandler] = [:]
            for write in writes {
                for connection in write() {
                    written[ObjectIdentifier(connection.value)] = connection.value
                }
            }
            for connection in written.values {
                connection.flush()
            }
            flushes = written.count
        }
        GatewayMetrics.fanoutFlushes.increment(by: Int64(flushes))
    }
}
