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
    /// Channels being joined and the events held for them, and the floors of snapshots just sent.
    private struct Joins {
        /// Events of channels being joined, held back until the joiner's snapshot is sent.
        var held: [String: [(offset: StreamOffset?, frame: ByteBuffer)]] = [:]
        /// Per channel, the offset of the snapshot last sent, while no newer event has come: the
        /// node's pub/sub link may deliver an event after the snapshot that already holds it (the
        /// snapshot is read on another connection), and such an event must not be sent again.
        var floors: [String: StreamOffset] = [:]
        /// Nothing to check: the fast path of every delivery.
        var isIdle: Bool { held.isEmpty && floors.isEmpty }
    }
    private let joins = Mutex(Joins())
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
        joins.withLock { joins in
            if !joins.isIdle {
                let eventOffset = offset.flatMap(StreamOffset.init)
                if joins.held[channel] != nil {
                    joins.held[channel]!.append((eventOffset, frame))
                    return
                }
                if let floor = joins.floors[channel], let eventOffset {
                    if eventOffset <= floor { return }
                    // Offsets of a channel increase: nothing older can follow this one.
                    joins.floors[channel] = nil
                }
            }
            send(frame)
        }
    }

    /// Starts holding `channel`'s events: call before subscribing, so none slips past the snapshot.
    func beginJoin(_ channel: String) {
        joins.withLock { joins in
            if joins.held[channel] == nil { joins.held[channel] = [] }
        }
    }

    /// Sends what the joiner needs first (a snapshot, or the events it missed), then the held
    /// events newer than `offset`, and goes live: no event is lost between subscribing and
    /// reading, and none is sent twice. A failed join passes no frames and no offset.
    func completeJoin(_ channel: String, sending frames: [ByteBuffer], upTo offset: StreamOffset?) {
        joins.withLock { joins in
            guard let held = joins.held.removeValue(forKey: channel) else { return }
            for frame in frames { send(frame) }
            var newer = false
            for event in held {
                if let offset, let eventOffset = event.offset, eventOffset <= offset { continue }
                if event.offset != nil { newer = true }
                send(event.frame)
            }
            // Until an event newer than `offset` arrives, older ones may still be on their way.
            if let offset, !newer { joins.floors[channel] = offset }
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
