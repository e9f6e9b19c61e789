import Foundation
public import Metrics
public import NIOCore
public import NIOWebSocket
public import SocketIO
public import Synchronization
public import WebSocketServer

/// A frame for one socket in both forms its transports take: the Engine.IO packet text, which
/// long-polling joins into a response body, and the WebSocket message, framed once (and
/// compressed at most once per window size, for the sockets that negotiated permessage-deflate).
public struct OutboundFrame: Sendable {
    /// The Engine.IO packet text (a polling body's part).
    public let packet: ByteBuffer
    /// The WebSocket message, framed once.
    public let webSocket: WebSocketOutboundMessage

    /// A text packet (`4…` for a message).
    public init(packet: ByteBuffer) {
        self.packet = packet
        self.webSocket = WebSocketOutboundMessage(.text, packet)
    }

    /// Binary data: a binary WebSocket message, or `b` and base64 in a polling body.
    public init(binary data: ByteBuffer) {
        self.packet = EngineIOPacket.binary(data).encoded()
        self.webSocket = WebSocketOutboundMessage(.binary, data)
    }
}

/// The gauges a server counts connected sessions in, by transport (a session moves from one to
/// the other when it upgrades). A class: every session refers to the server's one instance.
final class ConnectedGauges: Sendable {
    let polling: Meter
    let webSocket: Meter

    init(polling: Meter, webSocket: Meter) {
        self.polling = polling
        self.webSocket = webSocket
    }

    /// `<prefix>sockets_connected{transport}`.
    convenience init(prefix: String) {
        let label = prefix + "sockets_connected"
        self.init(polling: Meter(label: label, dimensions: [("transport", "polling")]), webSocket: Meter(label: label, dimensions: [("transport", "websocket")]))
    }
}

/// One client's Engine.IO connection as the rest of the node sees it: its session id and a way to
/// send it frames, over whichever transport carries it now.
///
/// Anything may send to a session from any thread without waiting. Over WebSocket, on the
/// connection's event loop with nothing queued, a frame is written at once (the fan-out's path);
/// from elsewhere it is queued, and one task on the loop writes the queue out and flushes once.
/// Over long-polling, frames wait for the next poll, which takes them all. Order is the order in
/// which senders took the session's lock.
public final class EngineIOConnection: Sendable {
    /// The Engine.IO session id.
    public let id: String
    /// Set once the application accepted the client (Socket.IO's CONNECT), for the connect timeout.
    let hasConnected = Atomic<Bool>(false)
    /// The session's deadline (milliseconds since 1970; `.max`: none): warned of before and
    /// closed at, by the session's engine. Set with ``setDeadline(_:)``.
    let deadline = Atomic<Int64>(.max)
    private let gauges: ConnectedGauges?

    private enum Outbound {
        case frame(OutboundFrame)
        case close(WebSocketCloseReason)
    }

    /// Where frames go now.
    private enum Transport {
        case webSocket(NIOLoopBound<WebSocketConnectionHandler>)
        /// Frames wait in `polled` for the next poll request.
        case polling
    }

    /// Why a poll request is refused.
    enum PollError: Error {
        /// Another poll of this session is waiting already (Engine.IO allows one).
        case overlapping
        /// The session is closed and its close packet was taken.
        case closed
        /// The session moved to WebSocket.
        case upgraded
    }

    /// A room of one namespace: what a join holds broadcasts for.
    struct RoomKey: Hashable {
        var namespace: String
        var room: String
    }

    /// Rooms being joined and the broadcasts held for them, and the floors of snapshots just sent.
    private struct Joins {
        /// Broadcasts to rooms being joined, held back until the joiner's snapshot is sent.
        var held: [RoomKey: [(position: BroadcastPosition?, frame: OutboundFrame)]] = [:]
        /// Per room, the position of the snapshot last sent, while no newer broadcast has come: an
        /// adapter may deliver a broadcast after a snapshot that already holds it (the snapshot is
        /// read elsewhere), and such a broadcast must not be sent again.
        var floors: [RoomKey: BroadcastPosition] = [:]
        /// Nothing to check: the fast path of every delivery.
        var isIdle: Bool { held.isEmpty && floors.isEmpty }

        /// Replaces emptied dictionaries, which keep their storage otherwise: memory per idle
        /// socket once its CONNECT or a join completed.
        mutating func compact() {
            if held.isEmpty { held = [:] }
            if floors.isEmpty { floors = [:] }
        }
    }

    private struct State {
        var joins = Joins()
        var transport: Transport
        /// The loop frames are written from: the WebSocket connection's.
        var loop: any EventLoop
        /// Frames waiting for the loop, in order (WebSocket).
        var queue: [Outbound] = []
        /// A task on the loop will write `queue` out.
        var writeScheduled = false
        /// Frames waiting for a poll (polling sends their packet text; an upgrade, their WebSocket
        /// form), what they hold against the socket's outbound limit, and the poll waiting.
        var polled: [OutboundFrame] = []
        var polledBudget = OutboundBudget(limit: 0)
        /// Told when the session closes while polling, from whatever side: its engine must end
        /// it (nothing else tells a polling session's engine that it is over).
        var onPollingClose: (@Sendable () -> Void)?
        /// Told when the deadline changes: the engine's timer follows.
        var onDeadlineChange: (@Sendable () -> Void)?
        var poll: EventLoopPromise<ByteBuffer>?
        /// A WebSocket probe of this session was answered and its upgrade packet is awaited:
        /// polls with nothing to take end at once with a noop, as the client waits for its
        /// pending poll to end before it sends the upgrade packet.
        var isUpgrading = false
        /// Closed by either side: nothing more is sent.
        var isClosed = false
        /// Counted in `<prefix>sockets_connected` under its transport (CONNECT accepted).
        var isCounted = false

        /// The gauge the session counts in while connected.
        func connectedGauge(_ gauges: ConnectedGauges?) -> Meter? {
            if case .polling = transport { return gauges?.polling }
            return gauges?.webSocket
        }
    }
    private let state: Mutex<State>

    /// A session on a WebSocket connection.
    /// - Parameter connection: the connection's handler, on its event loop.
    init(id: String, connection: WebSocketConnectionHandler, gauges: ConnectedGauges? = nil) {
        self.id = id
        self.gauges = gauges
        self.state = Mutex(State(transport: .webSocket(NIOLoopBound(connection, eventLoop: connection.eventLoop)), loop: connection.eventLoop))
    }

    /// A session served by long-polling until it upgrades.
    /// - Parameter maxQueuedBytes: what may wait for polls before the client counts as too slow.
    init(id: String, pollingOn loop: any EventLoop, maxQueuedBytes: Int, gauges: ConnectedGauges? = nil) {
        self.id = id
        self.gauges = gauges
        var state = State(transport: .polling, loop: loop)
        state.polledBudget = OutboundBudget(limit: maxQueuedBytes)
        self.state = Mutex(state)
    }

    /// Sets what is told when the session closes while polling (its close packet waits for the
    /// next poll): a client that does not poll its frames, a packet that cannot be decoded, a
    /// close from the server. The session must then be ended.
    func onPollingClose(_ body: (@Sendable () -> Void)?) {
        state.withLock { $0.onPollingClose = body }
    }

    /// Counts the session in its gauges (the application accepted it), under its transport until
    /// it upgrades.
    func countConnected() {
        state.withLock { state in
            guard !state.isCounted else { return }
            state.isCounted = true
            state.connectedGauge(gauges)?.increment()
        }
    }

    /// Stops counting the session (it disconnected).
    func countDisconnected() {
        state.withLock { state in
            guard state.isCounted else { return }
            state.isCounted = false
            state.connectedGauge(gauges)?.decrement()
        }
    }

    /// The loop the session's frames are written from (it changes once, on an upgrade).
    public var eventLoop: any EventLoop { state.withLock { $0.loop } }

    /// Sends a complete Engine.IO packet (text).
    public func send(_ packet: ByteBuffer) {
        send(OutboundFrame(packet: packet))
    }

    /// Sends a frame.
    public func send(_ frame: OutboundFrame) {
        perform(state.withLock { state in Self.enqueue(.frame(frame), &state) }, frame)
    }

    /// Sends frames that must stay together (a binary packet and its attachments): no other
    /// sender's frame comes between them.
    public func send(_ frames: [OutboundFrame]) {
        perform(state.withLock { state in Self.enqueue(frames, &state) }, nil)
    }

    /// Delivers a broadcast to `room` of `namespace`: at once, or held while the room is being
    /// joined, or dropped when the snapshot just sent holds it already (its position is no newer).
    /// - Returns: the connection the frame was written to without a flush (the caller flushes
    ///   it once for all the frames it delivers in a batch), or nil when it was queued or held.
    public func deliver(
        _ frame: OutboundFrame, to room: String, of namespace: String, position: BroadcastPosition? = nil
    ) -> NIOLoopBound<WebSocketConnectionHandler>? {
        // The decision and the enqueue under one lock: a join that began between them would
        // send its snapshot first, then this broadcast that the snapshot already holds.
        let action = state.withLock { state -> Action in
            if !state.joins.isIdle {
                let key = RoomKey(namespace: namespace, room: room)
                if state.joins.held[key] != nil {
                    state.joins.held[key]!.append((position, frame))
                    return .none
                }
                if let floor = state.joins.floors[key], let position {
                    if position <= floor { return .none }
                    // Positions in a room increase: nothing older can follow this one.
                    state.joins.floors[key] = nil
                    state.joins.compact()
                }
            }
            return Self.enqueue(.frame(frame), &state)
        }
        return performDeferringFlush(action, frame)
    }

    /// Delivers a broadcast of several frames (a packet and its attachments) to `room` of
    /// `namespace`, kept together, as ``deliver(_:to:of:position:)`` delivers one.
    func deliver(_ frames: [OutboundFrame], to room: String, of namespace: String, position: BroadcastPosition?) {
        let action = state.withLock { state -> Action in
            if !state.joins.isIdle {
                let key = RoomKey(namespace: namespace, room: room)
                if state.joins.held[key] != nil {
                    state.joins.held[key]!.append(contentsOf: frames.map { (position, $0) })
                    return .none
                }
                if let floor = state.joins.floors[key], let position {
                    if position <= floor { return .none }
                    state.joins.floors[key] = nil
                    state.joins.compact()
                }
            }
            return Self.enqueue(frames, &state)
        }
        perform(action, nil)
    }

    /// Delivers a volatile broadcast to `room` of `namespace`: sent like any frame, except while
    /// the room is being joined, when it is dropped rather than held (the snapshot that follows
    /// has the state it would change, and the next one comes soon).
    /// - Returns: as ``deliver(_:to:of:position:)``.
    public func deliverVolatile(_ frame: OutboundFrame, to room: String, of namespace: String) -> NIOLoopBound<WebSocketConnectionHandler>? {
        let action = state.withLock { state -> Action in
            if !state.joins.isIdle, state.joins.held[RoomKey(namespace: namespace, room: room)] != nil { return .none }
            return Self.enqueue(.frame(frame), &state)
        }
        return performDeferringFlush(action, frame)
    }

    /// Starts holding the room's broadcasts: call before the adapter adds the socket, so none
    /// slips past the snapshot.
    func beginJoin(_ key: RoomKey) {
        state.withLock { state in
            if state.joins.held[key] == nil { state.joins.held[key] = [] }
        }
    }

    /// Sends what the joiner needs first (a snapshot, or what it missed), then the held
    /// broadcasts newer than `position`, and goes live: none is lost between the adapter adding
    /// the socket and the snapshot, and none is sent twice. Passing no frames and no position
    /// releases what was held as it is.
    func completeJoin(_ key: RoomKey, sending frames: [OutboundFrame], upTo position: BroadcastPosition?) {
        let action = state.withLock { state -> Action in
            guard let held = state.joins.held.removeValue(forKey: key) else { return .none }
            state.joins.compact()
            var newer = false
            var released = frames
            for broadcast in held {
                if let position, let heldPosition = broadcast.position, heldPosition <= position { continue }
                if broadcast.position != nil { newer = true }
                released.append(broadcast.frame)
            }
            // Until a broadcast newer than `position` arrives, older ones may still be on their way.
            if let position, !newer { state.joins.floors[key] = position }
            return Self.enqueue(released, &state)
        }
        perform(action, nil)
    }

    /// Stops holding the room's broadcasts for a join that failed before anything was sent, and
    /// drops them.
    func abandonJoin(_ key: RoomKey) {
        state.withLock { state in
            state.joins.held[key] = nil
            state.joins.floors[key] = nil
            state.joins.compact()
        }
    }

    /// Ends the session: frames already queued are still sent, then the close (a close frame, or
    /// Engine.IO's close packet to the next poll). The first reason given wins.
    public func close(_ code: WebSocketErrorCode, reason: String) {
        perform(state.withLock { state in Self.enqueue(.close(WebSocketCloseReason(code, reason)), &state) }, nil)
    }

    /// Sets what is told when the deadline changes; nil to stop.
    func onDeadlineChange(_ body: (@Sendable () -> Void)?) {
        state.withLock { $0.onDeadlineChange = body }
    }

    /// The session now ends at `deadline` (nil: never): its handler is warned
    /// ``EngineIOSettings/deadlineWarning`` before, and the session is closed then.
    func setDeadline(_ deadline: Date?) {
        let milliseconds = deadline.map { Int64(($0.timeIntervalSince1970 * 1000).rounded(.down)) } ?? .max
        self.deadline.store(milliseconds, ordering: .relaxed)
        state.withLock { $0.onDeadlineChange }?()
    }

    /// The client closed the session (Engine.IO's close packet): nothing more is sent, and a
    /// waiting poll ends with a noop, as the reference server answers it (engine.io
    /// `transports/polling.ts` `onClose`). Over WebSocket the connection closes.
    func clientClosed() {
        let poll = state.withLock { state -> EventLoopPromise<ByteBuffer>? in
            guard case .polling = state.transport else { return nil }
            state.isClosed = true
            state.polled = []
            state.polledBudget.reset()
            defer { state.poll = nil }
            return state.poll
        }
        if let poll { return poll.succeed(EngineIOPacket.noop.encoded()) }
        close(.normalClosure, reason: "")
    }

    /// Whether a WebSocket may take this session over: it still polls, and no other WebSocket
    /// is probing it. The reference server closes any other (engine.io `Server.onWebSocket`).
    var mayUpgrade: Bool {
        state.withLock { state in
            guard case .polling = state.transport else { return false }
            return !state.isUpgrading && !state.isClosed
        }
    }

    /// The connection is gone: drops what is queued and whatever comes later.
    func connectionClosed() {
        let poll = state.withLock { state in
            state.isClosed = true
            state.queue = []
            defer { state.poll = nil }
            return state.poll
        }
        poll?.fail(PollError.closed)
    }

    // MARK: Long-polling

    /// Takes the frames waiting for a poll: at once when there are some, else when the next one
    /// comes. The body is Engine.IO packets joined by 0x1E.
    func poll() -> EventLoopFuture<ByteBuffer> {
        state.withLock { state -> EventLoopFuture<ByteBuffer> in
            if !state.polled.isEmpty {
                return state.loop.makeSucceededFuture(Self.takePolled(&state))
            }
            guard case .polling = state.transport else { return state.loop.makeFailedFuture(PollError.upgraded) }
            guard state.poll == nil else { return state.loop.makeFailedFuture(PollError.overlapping) }
            guard !state.isClosed else { return state.loop.makeFailedFuture(PollError.closed) }
            if state.isUpgrading { return state.loop.makeSucceededFuture(EngineIOPacket.noop.encoded()) }
            let promise = state.loop.makePromise(of: ByteBuffer.self)
            state.poll = promise
            return promise.futureResult
        }
    }

    /// A WebSocket connection answered this session's probe (`2probe`): the waiting poll ends
    /// with a noop now, and so does every poll until the upgrade or ``abandonUpgrade()``, as the
    /// reference server does (socketio/engine.io `Socket._maybeUpgrade`). socket.io-client sends
    /// the upgrade packet only once its pending poll has ended.
    func beginUpgrade() {
        let poll = state.withLock { state -> EventLoopPromise<ByteBuffer>? in
            guard case .polling = state.transport, !state.isClosed else { return nil }
            state.isUpgrading = true
            defer { state.poll = nil }
            return state.poll
        }
        poll?.succeed(EngineIOPacket.noop.encoded())
    }

    /// The probing WebSocket closed before the upgrade: polls wait for frames again.
    func abandonUpgrade() {
        state.withLock { $0.isUpgrading = false }
    }

    /// Moves the session to a WebSocket connection (Engine.IO's upgrade packet came on it): the
    /// waiting poll ends with a noop, and frames not polled yet go out on the WebSocket.
    func upgrade(to connection: WebSocketConnectionHandler) {
        let (poll, action) = state.withLock { state -> (EventLoopPromise<ByteBuffer>?, Action) in
            if state.isCounted { state.connectedGauge(gauges)?.decrement() }
            state.transport = .webSocket(NIOLoopBound(connection, eventLoop: connection.eventLoop))
            if state.isCounted { state.connectedGauge(gauges)?.increment() }
            state.loop = connection.eventLoop
            let poll = state.poll
            state.poll = nil
            let action = Self.enqueue(state.polled, &state)
            state.polled = []
            state.polledBudget.reset()
            return (poll, action)
        }
        poll?.succeed(EngineIOPacket.noop.encoded())
        perform(action, nil)
    }

    private static func takePolled(_ state: inout State) -> ByteBuffer {
        defer {
            state.polled = []
            state.polledBudget.reset()
        }
        return EngineIOPayload.join(frames: state.polled.map(\.packet))
    }

    // MARK: Writing

    private enum Action {
        case none
        /// Write this frame now: on the loop, with nothing queued before it.
        case writeNow(NIOLoopBound<WebSocketConnectionHandler>)
        case scheduleWrite(any EventLoop)
        /// A waiting poll takes these.
        case answerPoll(EventLoopPromise<ByteBuffer>, ByteBuffer)
        /// The polling session closed: answer the waiting poll, if any, then tell its owner.
        case endPolling(@Sendable () -> Void, answering: (EventLoopPromise<ByteBuffer>, ByteBuffer)?)
    }

    /// Queues several frames in order; only the queue keeps them together against other senders.
    private static func enqueue(_ frames: [OutboundFrame], _ state: inout State) -> Action {
        var action = Action.none
        for frame in frames {
            let next = enqueue(.frame(frame), &state, mayWriteNow: false)
            if case .none = next {} else { action = next }
        }
        return action
    }

    /// Queues a frame or a close for the transport in use, and says what to do once unlocked.
    /// - Parameter mayWriteNow: false when more frames follow under the same lock.
    private static func enqueue(_ item: Outbound, _ state: inout State, mayWriteNow: Bool = true) -> Action {
        guard !state.isClosed else { return .none }
        if case .close = item { state.isClosed = true }
        switch state.transport {
        case .polling:
            switch item {
            case .frame(let frame):
                guard state.polledBudget.take(frame.packet) else {
                    // Nobody polls: what waits is dropped, the close packet waits instead.
                    state.polled = [OutboundFrame(packet: EngineIOPacket.close.encoded())]
                    state.polledBudget.reset()
                    state.isClosed = true
                    return state.onPollingClose.map { .endPolling($0, answering: nil) } ?? .none
                }
                state.polled.append(frame)
            case .close:
                state.polled.append(OutboundFrame(packet: EngineIOPacket.close.encoded()))
            }
            let answer = state.poll.map { poll in (poll, takePolled(&state)) }
            state.poll = nil
            if case .close = item, let end = state.onPollingClose { return .endPolling(end, answering: answer) }
            return answer.map { .answerPoll($0.0, $0.1) } ?? .none
        case .webSocket(let connection):
            if mayWriteNow, !state.writeScheduled, case .frame = item, state.loop.inEventLoop { return .writeNow(connection) }
            state.queue.append(item)
            guard !state.writeScheduled else { return .none }
            state.writeScheduled = true
            return .scheduleWrite(state.loop)
        }
    }

    private func perform(_ action: Action, _ frame: OutboundFrame?) {
        switch action {
        case .none:
            break
        case .writeNow(let connection):
            let connection = connection.value
            connection.write(frame!.webSocket)
            connection.flush()
        case .scheduleWrite(let loop):
            loop.execute { self.writeQueue() }
        case .answerPoll(let poll, let body):
            poll.succeed(body)
        case .endPolling(let end, let answer):
            if let (poll, body) = answer { poll.succeed(body) }
            end()
        }
    }

    /// ``perform(_:_:)``, except that a frame written at once is not flushed: the connection is
    /// returned for the caller to flush.
    private func performDeferringFlush(_ action: Action, _ frame: OutboundFrame) -> NIOLoopBound<WebSocketConnectionHandler>? {
        guard case .writeNow(let connection) = action else {
            perform(action, frame)
            return nil
        }
        connection.value.write(frame.webSocket)
        return connection
    }

    /// On the loop: writes what is queued, flushes once, and closes if a close was queued.
    private func writeQueue() {
        let (queue, transport) = state.withLock { state -> ([Outbound], Transport) in
            state.writeScheduled = false
            let queue = state.queue
            state.queue = []
            return (queue, state.transport)
        }
        guard case .webSocket(let bound) = transport else { return }
        let connection = bound.value
        for item in queue {
            switch item {
            case .frame(let frame):
                connection.write(frame.webSocket)
            case .close(let reason):
                connection.flush()
                connection.close(reason)
                return
            }
        }
        connection.flush()
    }
}
