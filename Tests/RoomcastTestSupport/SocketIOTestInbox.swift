import SocketIO

/// What a `SocketIOTestSession` received and nobody has awaited yet, queued per key.
///
/// Plain value, no concurrency: the session actor owns it. Each awaitable thing (the open
/// packet, a CONNECT reply, events of one name, the ack with one id, pings) has its own FIFO,
/// so an item that arrives before the test asks for it is kept, never dropped.
struct SocketIOTestInbox {
    /// What a test can wait for.
    enum Key: Hashable, Sendable, CustomStringConvertible {
        case handshake
        case connectReply(namespace: String)
        case event(String)
        case ack(Int)
        case ping
        /// Only ever awaited, never queued: the session answers it from its close state.
        case close

        var description: String {
            switch self {
            case .handshake: "the Engine.IO open packet"
            case .connectReply(let namespace): "the CONNECT reply for namespace \(namespace)"
            case .event(let name): "event '\(name)'"
            case .ack(let id): "ack \(id)"
            case .ping: "a ping (2)"
            case .close: "the WebSocket to close"
            }
        }
    }

    /// One received thing, already decoded as far as the client understands it.
    enum Item: Sendable {
        case handshake(EngineIOHandshake)
        case connected(sid: String)
        case refused(message: String, code: String?)
        /// Raw JSON of an event's or ack's first argument.
        case json(String)
        case ping
        case closed(code: Int?, reason: String?)
    }

    private var queues: [Key: [Item]] = [:]
    /// Every event received, by name, in arrival order, whether or not a test consumed it.
    private(set) var eventHistory: [String: [String]] = [:]
    /// Every event received, of any name, in arrival order.
    private(set) var eventLog: [(name: String, payload: String)] = []
    /// The last text frames received, newest last, for timeout messages.
    private(set) var recentFrames: [String] = []
    private static let recentFrameLimit = 8
    private static let recentFrameLength = 300

    /// Queues `item` for the next `popFirst(key)`.
    mutating func append(_ item: Item, for key: Key) {
        self.queues[key, default: []].append(item)
    }

    /// The oldest item queued under `key`, removed.
    mutating func popFirst(_ key: Key) -> Item? {
        guard var queue = self.queues[key], !queue.isEmpty else { return nil }
        let item = queue.removeFirst()
        self.queues[key] = queue.isEmpty ? nil : queue
        return item
    }

    /// Remembers an event for `events(named:)`.
    mutating func recordEvent(name: String, payload: String) {
        self.eventHistory[name, default: []].append(payload)
        self.eventLog.append((name, payload))
    }

    /// Remembers a frame (shortened) for failure messages.
    mutating func recordFrame(_ text: String) {
        let shown = text.count > Self.recentFrameLength ? "\(text.prefix(Self.recentFrameLength))…" : text
        self.recentFrames.append(shown)
        if self.recentFrames.count > Self.recentFrameLimit {
            self.recentFrames.removeFirst(self.recentFrames.count - Self.recentFrameLimit)
        }
    }
}
