import NIOCore
import RoomcastCore
import NIOWebSocket
import Synchronization
import HummingbirdWebSocket

/// One client connection as the rest of the node sees it: an id and a queue of frames to send.
///
/// Anything may send to a session from any thread without waiting: frames go into a bounded queue
/// that the connection's writer task drains in order. A client that lets the queue fill is too
/// slow to keep up and is disconnected; it reconnects and recovers what it missed by offset.
final class SocketSession: Sendable {
    /// What the writer task does next.
    enum Outbound: Sendable {
        case frame(ByteBuffer)
    }

    /// The Engine.IO session id.
    let id: String
    /// Pongs received, so the pinger can tell whether one arrived since its ping.
    let pongs = Atomic<UInt64>(0)
    /// Set once a Socket.IO CONNECT succeeded, for the connect timeout.
    let hasConnected = Atomic<Bool>(false)
    private let queue: AsyncStream<Outbound>.Continuation
    /// Events of channels being joined, held back until the joiner's snapshot is sent.
    private let joining = Mutex<[String: [(offset: StreamOffset?, frame: ByteBuffer)]]>([:])
    /// Per channel, the offset of the snapshot last sent, while no newer event has come: the
    /// node's pub/sub link may deliver an event after the snapshot that already holds it (the
    /// snapshot is read on another connection), and such an event must not be sent again.
    /// Guarded by `joining`'s lock.
    private let floors = Mutex<[String: StreamOffset]>([:])
    /// How many channels are being joined or have a floor: zero on the fast path of every delivery.
    /// Changed and read under `joining`'s lock.
    private let joiningCount = Atomic<Int>(0)
    private let closeRequest = Mutex<(code: WebSocketErrorCode, reason: String)?>(nil)

    /// Creates a session and the stream its writer drains.
    static func make(id: String, queueLimit: Int) -> (SocketSession, AsyncStream<Outbound>) {
        let (stream, continuation) = AsyncStream.makeStream(of: Outbound.self, bufferingPolicy: .bufferingOldest(queueLimit))
        return (SocketSession(id: id, queue: continuation), stream)
    }

    private init(id: String, queue: AsyncStream<Outbound>.Continuation) {
        self.id = id
        self.queue = queue
    }

    /// Queues a complete Engine.IO frame (text) for this client.
    func send(_ frame: ByteBuffer) {
        if case .dropped = queue.yield(.frame(frame)) {
            close(.policyViolation, reason: "client too slow to receive its events")
        }
    }

    /// Delivers a published event of `channel`: at once, or held while the channel is joined,
    /// or dropped when the snapshot just sent holds it already.
    func deliver(_ frame: ByteBuffer, offset: Substring?, channel: String) {
        // The decision and the enqueue under one lock: a join that began between them would
        // send its snapshot first, then this event that the snapshot already holds.
        joining.withLock { joining in
            if joiningCount.load(ordering: .relaxed) > 0 {
                let eventOffset = offset.flatMap(StreamOffset.init)
                if joining[channel] != nil {
                    joining[channel]!.append((eventOffset, frame))
                    return
                }
                let sendNow = floors.withLock { floors in
                    guard let floor = floors[channel], let eventOffset else { return true }
                    if eventOffset <= floor { return false }
                    // Offsets of a channel increase: nothing older can follow this one.
                    floors[channel] = nil
                    joiningCount.subtract(1, ordering: .relaxed)
                    return true
                }
                if !sendNow { return }
            }
            send(frame)
        }
    }

    /// Starts holding `channel`'s events: call before subscribing, so none slips past the snapshot.
    func beginJoin(_ channel: String) {
        joining.withLock { joining in
            if joining[channel] == nil {
                joining[channel] = []
                joiningCount.add(1, ordering: .releasing)
            }
        }
    }

    /// Sends what the joiner needs first (a snapshot, or the events it missed), then the held
    /// events newer than `offset`, and goes live: no event is lost between subscribing and
    /// reading, and none is sent twice. A failed join passes no frames and no offset.
    func completeJoin(_ channel: String, sending frames: [ByteBuffer], upTo offset: StreamOffset?) {
        joining.withLock { joining in
            guard let held = joining.removeValue(forKey: channel) else { return }
            joiningCount.subtract(1, ordering: .releasing)
            for frame in frames { send(frame) }
            var newer = false
            for event in held {
                if let offset, let eventOffset = event.offset, eventOffset <= offset { continue }
                if event.offset != nil { newer = true }
                send(event.frame)
            }
            // Until an event newer than `offset` arrives, older ones may still be on their way.
            if let offset, !newer {
                floors.withLock { floors in
                    if floors.updateValue(offset, forKey: channel) == nil { joiningCount.add(1, ordering: .releasing) }
                }
            }
        }
    }

    /// Ends the session: frames already queued are still sent, then the WebSocket closes with
    /// `code`. The first reason given wins.
    func close(_ code: WebSocketErrorCode, reason: String) {
        closeRequest.withLock { request in
            if request == nil { request = (code, reason) }
        }
        queue.finish()
    }

    /// Why the session was closed by the server, if it was.
    var closeReason: (code: WebSocketErrorCode, reason: String)? {
        closeRequest.withLock { $0 }
    }
}
