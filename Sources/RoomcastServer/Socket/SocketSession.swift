import NIOCore
import NIOWebSocket
import RoomcastCore
import Synchronization

/// One client connection as the rest of the node sees it: an id and a way to send it frames.
///
/// Anything may send to a session from any thread without waiting. On the connection's event
/// loop with nothing queued, a frame is written at once (the fan-out's path); from elsewhere it is
/// queued, and one task on the loop writes the queue out and flushes once. Order is the order in
/// which senders took the session's lock.
final class SocketSession: Sendable {
    /// The Engine.IO session id.
    let id: String
    /// Set once a Socket.IO CONNECT succeeded, for the connect timeout.
    let hasConnected = Atomic<Bool>(false)
    /// The loop the connection's channel lives on.
    let eventLoop: any EventLoop
    private let connection: NIOLoopBound<WebSocketConnectionHandler>

    private enum Outbound {
        /// WebSocket frame bytes, already encoded.
        case frame(ByteBuffer)
        case close(WebSocketCloseReason)
    }

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

    private struct State {
        var joins = Joins()
        /// Frames waiting for the loop, in order.
        var queue: [Outbound] = []
        /// A task on the loop will write `queue` out.
        var writeScheduled = false
        /// Closed by either side: nothing more is sent.
        var isClosed = false
    }
    private let state = Mutex(State())

    /// - Parameter connection: the connection's handler, on its event loop.
    init(id: String, connection: WebSocketConnectionHandler) {
        self.id = id
        self.eventLoop = connection.eventLoop
        self.connection = NIOLoopBound(connection, eventLoop: connection.eventLoop)
    }

    /// Sends a complete Engine.IO packet (text).
    func send(_ packet: ByteBuffer) {
        let frame = WebSocketFrameBytes.frame(.text, packet)
        let action = state.withLock { state in Self.enqueue(.frame(frame), &state, onLoop: eventLoop.inEventLoop) }
        perform(action, frame)
    }

    /// Delivers a published event of `channel` (its WebSocket frame bytes): at once, or held while
    /// the channel is joined, or dropped when the snapshot just sent holds it already.
    func deliver(_ frame: ByteBuffer, offset: Substring?, channel: String) {
        // The decision and the enqueue under one lock: a join that began between them would
        // send its snapshot first, then this event that the snapshot already holds.
        let action = state.withLock { state -> Action in
            if !state.joins.isIdle {
                let eventOffset = offset.flatMap(StreamOffset.init)
                if state.joins.held[channel] != nil {
                    state.joins.held[channel]!.append((eventOffset, frame))
                    return .none
                }
                if let floor = state.joins.floors[channel], let eventOffset {
                    if eventOffset <= floor { return .none }
                    // Offsets of a channel increase: nothing older can follow this one.
                    state.joins.floors[channel] = nil
                }
            }
            return Self.enqueue(.frame(frame), &state, onLoop: eventLoop.inEventLoop)
        }
        perform(action, frame)
    }

    /// Starts holding `channel`'s events: call before subscribing, so none slips past the snapshot.
    func beginJoin(_ channel: String) {
        state.withLock { state in
            if state.joins.held[channel] == nil { state.joins.held[channel] = [] }
        }
    }

    /// Sends what the joiner needs first (a snapshot, or the events it missed: Engine.IO
    /// packets), then the held events newer than `offset`, and goes live: no event is lost
    /// between subscribing and reading, and none is sent twice. A failed join passes no packets
    /// and no offset.
    func completeJoin(_ channel: String, sending packets: [ByteBuffer], upTo offset: StreamOffset?) {
        let frames = packets.map { WebSocketFrameBytes.frame(.text, $0) }
        let action = state.withLock { state -> Action in
            guard let held = state.joins.held.removeValue(forKey: channel) else { return .none }
            var action = Action.none
            func send(_ frame: ByteBuffer) {
                // Several frames: only the queue keeps them in order with other senders.
                if case .scheduleWrite = Self.enqueue(.frame(frame), &state, onLoop: false) { action = .scheduleWrite }
            }
            for frame in frames { send(frame) }
            var newer = false
            for event in held {
                if let offset, let eventOffset = event.offset, eventOffset <= offset { continue }
                if event.offset != nil { newer = true }
                send(event.frame)
            }
            // Until an event newer than `offset` arrives, older ones may still be on their way.
            if let offset, !newer { state.joins.floors[channel] = offset }
            return action
        }
        perform(action, nil)
    }

    /// Ends the session: frames already queued are still sent, then the close frame. The first
    /// reason given wins.
    func close(_ code: WebSocketErrorCode, reason: String) {
        let action = state.withLock { state in Self.enqueue(.close(WebSocketCloseReason(code, reason)), &state, onLoop: false) }
        perform(action, nil)
    }

    /// The connection is gone: drops what is queued and whatever comes later.
    func connectionClosed() {
        state.withLock { state in
            state.isClosed = true
            state.queue = []
        }
    }

    // MARK: Writing

    private enum Action {
        case none
        /// Write this frame now: on the loop, with nothing queued before it.
        case writeNow
        case scheduleWrite
    }

    private static func enqueue(_ item: Outbound, _ state: inout State, onLoop: Bool) -> Action {
        guard !state.isClosed else { return .none }
        if case .close = item { state.isClosed = true }
        if onLoop, !state.writeScheduled, case .frame = item { return .writeNow }
        state.queue.append(item)
        guard !state.writeScheduled else { return .none }
        state.writeScheduled = true
        return .scheduleWrite
    }

    private func perform(_ action: Action, _ frame: ByteBuffer?) {
        switch action {
        case .none:
            break
        case .writeNow:
            let connection = self.connection.value
            connection.write(frame!)
            connection.flush()
        case .scheduleWrite:
            eventLoop.execute { self.writeQueue() }
        }
    }

    /// On the loop: writes what is queued, flushes once, and closes if a close was queued.
    private func writeQueue() {
        let queue = state.withLock { state -> [Outbound] in
            state.writeScheduled = false
            let queue = state.queue
            state.queue = []
            return queue
        }
        let connection = self.connection.value
        for item in queue {
            switch item {
            case .frame(let frame):
                connection.write(frame)
            case .close(let reason):
                connection.flush()
                connection.close(reason)
                return
            }
        }
        connection.flush()
    }
}
