import Foundation
import NIOCore
import NIOWebSocket
import SocketIO
import Synchronization
import WebSocketServer

/// The Socket.IO side of one Engine.IO session: packets decoded (on the session's event loop, as
/// they arrive), binary attachments put back with their packet, sockets connected to namespaces,
/// and each event handed to its namespace's handler in the order the namespace asks for.
///
/// Events run in lanes: a lane is a task that runs its events one at a time and ends when none is
/// left (an idle connection has no task at all). With ``SocketIOEventOrder/arrival`` a connection
/// has one lane; with ``SocketIOEventOrder/perKey`` one per key with events waiting; with
/// ``SocketIOEventOrder/concurrent`` each event is a task. A CONNECT, a DISCONNECT, bad input and
/// the session's end are barriers: they wait for the running events, and what comes after them
/// waits for them.
///
/// What cannot be decoded closes the connection (1002), as in the reference server (socket.io
/// `lib/client.ts` `onerror`, engine.io `lib/socket.ts`): a packet of an unknown type, data that
/// is not what its type needs, a bad ack id, a binary frame that no binary packet announced,
/// text where an attachment was due.
final class SocketIOConnection: EngineIOSessionHandler, @unchecked Sendable {
    /// What waits behind a barrier, in order.
    private enum Item {
        case control(Control)
        /// An event not routed yet, and what it weighs against the inbound budget.
        case event(namespace: String, SocketIOEvent, cost: Int)
        case ack(namespace: String, id: Int, SocketIOArguments)
        /// An event routed already, whose work waits.
        case routed(Work)
    }

    private enum Control {
        case connect(namespace: String, auth: ByteBuffer?)
        case disconnect(namespace: String, SocketIODisconnectReason)
        case undecodable(String)
        case ended(EngineIOCloseReason)
    }

    /// An event's asynchronous part.
    private struct Work {
        /// The lane it runs in; nil: a task of its own.
        var lane: String?
        var cost: Int
        var run: @Sendable () async -> Void
    }

    private enum BarrierState {
        case none
        /// A control item runs, or waits for the lanes to finish.
        case control
        /// What waited behind a barrier is being handled.
        case draining
    }

    /// The sockets connected, by namespace (most connections have one).
    private struct Sockets {
        var first: SocketIOSocket?
        var others: [String: SocketIOSocket] = [:]

        subscript(namespace: String) -> SocketIOSocket? {
            if let first, first.namespace == namespace { return first }
            return others.isEmpty ? nil : others[namespace]
        }

        mutating func insert(_ socket: SocketIOSocket) {
            if first == nil || first!.namespace == socket.namespace { first = socket } else { others[socket.namespace] = socket }
        }

        mutating func remove(_ namespace: String) -> SocketIOSocket? {
            if let first, first.namespace == namespace {
                self.first = others.isEmpty ? nil : others.removeValue(forKey: others.keys.first!)
                if others.isEmpty { others = [:] }
                return first
            }
            return others.removeValue(forKey: namespace)
        }

        var all: [SocketIOSocket] { (first.map { [$0] } ?? []) + others.values }
        var isEmpty: Bool { first == nil }
    }

    private struct Dispatch {
        var budget: OutboundBudget
        var barrier = BarrierState.none
        /// The control item waiting for the lanes to finish.
        var pendingControl: Control?
        var waiting: [Item] = []
        /// The lanes running, each with the events waiting for it.
        var lanes: [String: [Work]] = [:]
        /// Lanes and lone tasks running.
        var running = 0
        var sockets = Sockets()
        var ended = false
        /// What the connection keeps of its opening request.
        var handshake: (any Sendable)?

        /// The control item waiting for the events to end, once none runs.
        mutating func takeControlIfIdle() -> Control? {
            guard running == 0, let control = pendingControl else { return nil }
            pendingControl = nil
            return control
        }
    }

    /// A binary packet and the attachments that came so far.
    private final class PendingBinary {
        let packet: SocketIOPacket
        var attachments: [ByteBuffer] = []
        var cost: Int

        init(_ packet: SocketIOPacket, cost: Int) {
            self.packet = packet
            self.cost = cost
        }
    }

    let transport: EngineIOConnection
    private let server: SocketServer
    private let dispatch: Mutex<Dispatch>
    /// On the session's event loop only: decoding state.
    private var pendingBinary: PendingBinary?
    /// On the session's event loop only: closed for bad input or a flood; nothing more is decoded.
    private var isClosed = false

    init(transport: EngineIOConnection, server: SocketServer, handshake: (any Sendable)?) {
        self.transport = transport
        self.server = server
        var dispatch = Dispatch(budget: OutboundBudget(limit: server.configuration.inboundQueueBytes))
        dispatch.handshake = handshake
        self.dispatch = Mutex(dispatch)
    }

    var handshake: (any Sendable)? {
        get { dispatch.withLock { $0.handshake } }
        set { dispatch.withLock { $0.handshake = newValue } }
    }

    // MARK: Engine.IO (on the session's event loop)

    func received(_ inbound: EngineIOInbound) {
        switch inbound {
        case .message(let body): receivedPacket(body)
        case .binary(let data): receivedBinary(data)
        case .undecodable(let reason): failDecoding(reason)
        case .ended(let reason):
            pendingBinary = nil
            isClosed = true
            submit(.control(.ended(reason)))
        }
    }

    func deadlineApproaching(_ deadline: Date) {
        for socket in connectedSockets {
            socket.namespaceCore.handlers.withLock { $0.deadlineApproaching }?(socket, deadline)
        }
    }

    func deadlineReached() {
        for socket in connectedSockets {
            socket.namespaceCore.handlers.withLock { $0.deadline }?(socket)
        }
    }

    private var connectedSockets: [SocketIOSocket] { dispatch.withLock { $0.sockets.all } }

    private func receivedPacket(_ body: ByteBuffer) {
        guard !isClosed else { return }
        guard pendingBinary == nil else { return failDecoding("a text packet where a binary attachment was due") }
        let packet: SocketIOPacket
        do {
            packet = try SocketIOPacket(decoding: body)
        } catch {
            return failDecoding(error.message)
        }
        let maxAttachments = server.configuration.maxAttachments
        switch packet.attachments {
        case .some(let count) where count > maxAttachments:
            failDecoding("\(count) attachments: at most \(maxAttachments)")
        case .some(let count) where count > 0:
            guard take(body.readableBytes) else { return }
            pendingBinary = PendingBinary(packet, cost: body.readableBytes)
        case .some:
            dispatchPacket(packet, attachments: [], cost: body.readableBytes)
        case .none:
            dispatchPacket(packet, attachments: nil, cost: body.readableBytes)
        }
    }

    private func receivedBinary(_ data: ByteBuffer) {
        guard !isClosed else { return }
        guard let pending = pendingBinary else { return failDecoding("binary data outside a binary packet") }
        guard take(data.readableBytes) else { return }
        pending.attachments.append(data)
        pending.cost += data.readableBytes
        if pending.attachments.count == pending.packet.attachments {
            pendingBinary = nil
            // Counted as it came.
            dispatchPacket(pending.packet, attachments: pending.attachments, cost: pending.cost)
        }
    }

    /// Counts bytes against the inbound budget as they arrive; past it, the connection closes.
    private func take(_ bytes: Int) -> Bool {
        let taken = dispatch.withLock { $0.budget.take(byteCount: bytes) }
        if !taken {
            isClosed = true
            pendingBinary = nil
            transport.close(.policyViolation, reason: "too many packets waiting: wait for acks before sending more")
        }
        return taken
    }

    private func give(back bytes: Int) {
        dispatch.withLock { $0.budget.give(backByteCount: bytes) }
    }

    private func failDecoding(_ reason: String) {
        guard !isClosed else { return }
        isClosed = true
        pendingBinary = nil
        submit(.control(.undecodable(reason)))
    }

    private func dispatchPacket(_ packet: SocketIOPacket, attachments: [ByteBuffer]?, cost: Int) {
        let namespace = packet.namespace
        switch packet.kind {
        case .connect:
            submit(.control(.connect(namespace: namespace, auth: packet.data)))
        case .disconnect:
            submit(.control(.disconnect(namespace: namespace, .clientNamespaceDisconnect)))
        case .event:
            guard let name = packet.eventName else { return }
            // A binary packet's bytes were counted already as they came.
            guard attachments != nil || take(cost) else { return }
            let arguments = SocketIOArguments(json: packet.arguments, attachments: attachments ?? [])
            submit(.event(namespace: namespace, SocketIOEvent(name: name, arguments: arguments, ackID: packet.ackId), cost: cost))
        case .ack:
            if attachments != nil { give(back: cost) }
            guard let id = packet.ackId else { return }
            submit(.ack(namespace: namespace, id: id, SocketIOArguments(json: packet.arguments, attachments: attachments ?? [])))
        case .connectError:
            if attachments != nil { give(back: cost) }
        }
    }

    /// The server removed a socket (``SocketIOSocket/disconnect(closingConnection:)``).
    func serverDisconnected(_ namespace: String) {
        submit(.control(.disconnect(namespace: namespace, .serverNamespaceDisconnect)))
    }

    // MARK: Dispatch

    /// Handles an item now, or queues it behind the barrier in force.
    private func submit(_ item: Item) {
        let now = dispatch.withLock { dispatch -> Bool in
            if case .control(.ended) = item {
                guard !dispatch.ended else { return false }
                dispatch.ended = true
            } else if dispatch.ended, case .control = item {
                return false
            }
            guard dispatch.barrier == .none, dispatch.waiting.isEmpty else {
                dispatch.waiting.append(item)
                return false
            }
            return true
        }
        if now { handle(item) }
    }

    /// Handles an item that no barrier holds back; called with no lock held.
    private func handle(_ item: Item) {
        switch item {
        case .control(let control):
            if startBarrier(control) { drain() }
        case .event(let namespace, let event, let cost):
            guard let socket = dispatch.withLock({ $0.sockets[namespace] }) else {
                // Socket.IO servers ignore events for a namespace the socket has not connected to.
                return give(back: cost)
            }
            let route = socket.namespaceCore.route(event, of: socket)
            guard let work = route.work else { return give(back: cost) }
            schedule(Work(lane: lane(of: route, in: socket.namespaceCore), cost: cost, run: work))
        case .ack(let namespace, let id, let arguments):
            dispatch.withLock { $0.sockets[namespace] }?.answered(id, with: arguments)
        case .routed(let work):
            schedule(work)
        }
    }

    private func lane(of route: SocketIOEventRoute, in namespace: NamespaceCore) -> String? {
        switch namespace.handlers.withLock({ $0.order }) {
        case .arrival: return ""
        case .concurrent: return nil
        case .perKey: return route.key ?? ""
        }
    }

    /// Runs an event's work in its lane (starting the lane when it is idle) or in a task of its own.
    private func schedule(_ work: Work) {
        enum Start { case none, lane(String), alone }
        let start = dispatch.withLock { dispatch -> Start in
            if dispatch.barrier == .control {
                // A barrier came from elsewhere (a server disconnect) while this was routed.
                dispatch.waiting.append(.routed(work))
                return .none
            }
            guard let lane = work.lane else {
                dispatch.running += 1
                return .alone
            }
            if dispatch.lanes[lane] != nil {
                dispatch.lanes[lane]!.append(work)
                return .none
            }
            dispatch.lanes[lane] = []
            dispatch.running += 1
            return .lane(lane)
        }
        switch start {
        case .none:
            break
        case .alone:
            Task { await self.runAlone(work) }
        case .lane(let lane):
            Task { await self.runLane(lane, first: work) }
        }
    }

    private func runLane(_ lane: String, first: Work) async {
        var next: Work? = first
        while let work = next {
            await work.run()
            let control: Control?
            (next, control) = dispatch.withLock { dispatch -> (Work?, Control?) in
                dispatch.budget.give(backByteCount: work.cost)
                if dispatch.lanes[lane]?.isEmpty == false { return (dispatch.lanes[lane]!.removeFirst(), nil) }
                // Under the lock: an event that comes next starts a new lane.
                dispatch.lanes[lane] = nil
                if dispatch.lanes.isEmpty { dispatch.lanes = [:] }
                dispatch.running -= 1
                return (nil, dispatch.takeControlIfIdle())
            }
            if let control { run(control) }
        }
    }

    private func runAlone(_ work: Work) async {
        await work.run()
        let control = dispatch.withLock { dispatch -> Control? in
            dispatch.budget.give(backByteCount: work.cost)
            dispatch.running -= 1
            return dispatch.takeControlIfIdle()
        }
        if let control { run(control) }
    }

    /// Puts a control item in force: it runs once no event runs.
    /// - Returns: whether it ran to its end already (the caller then drains what waited).
    private func startBarrier(_ control: Control) -> Bool {
        let now = dispatch.withLock { dispatch -> Bool in
            dispatch.barrier = .control
            guard dispatch.running == 0 else {
                dispatch.pendingControl = control
                return false
            }
            return true
        }
        guard now else { return false }
        return runNow(control)
    }

    /// Runs a control item whose barrier came after waiting for the lanes.
    private func run(_ control: Control) {
        if runNow(control) { drain() }
    }

    /// Handles what waited behind a barrier, in order, until it is all handled or another barrier
    /// holds the rest.
    private func drain() {
        while true {
            let item = dispatch.withLock { dispatch -> Item? in
                guard !dispatch.waiting.isEmpty else {
                    dispatch.barrier = .none
                    dispatch.waiting = []
                    return nil
                }
                dispatch.barrier = .draining
                return dispatch.waiting.removeFirst()
            }
            guard let item else { return }
            if case .control(let control) = item {
                guard startBarrier(control) else { return }
                continue
            }
            handle(item)
        }
    }

    // MARK: Control items

    /// Runs a control item: to its end now, or in a task that drains when it is done.
    /// - Returns: whether it ended already.
    private func runNow(_ control: Control) -> Bool {
        switch control {
        case .connect(let namespace, let auth):
            return connect(namespace, auth: auth)
        case .disconnect(let namespace, let reason):
            guard let socket = dispatch.withLock({ $0.sockets.remove(namespace) }) else { return true }
            return disconnect([socket], reason: reason)
        case .undecodable(let reason):
            transport.close(.protocolError, reason: reason)
            server.undecodable(reason)
            return true
        case .ended(let reason):
            let sockets = dispatch.withLock { dispatch in
                defer { dispatch.sockets = Sockets() }
                return dispatch.sockets.all
            }
            return disconnect(sockets, reason: SocketIODisconnectReason(reason))
        }
    }

    private func connect(_ name: String, auth: ByteBuffer?) -> Bool {
        guard let namespace = server.namespaceCore(name) else {
            // Exactly the reference server's refusal (socket.io `lib/client.ts`).
            transport.send(SocketIOFrame.connectError(message: "Invalid namespace", namespace: name))
            server.invalidNamespace(name)
            return true
        }
        if let connected = dispatch.withLock({ $0.sockets[name] }) {
            // Connected already: the same answer again.
            connected.send(SocketIOFrame.connect(sid: connected.id.description, namespace: name))
            return true
        }
        let socket = SocketIOSocket(namespace: namespace, connection: self)
        let request = SocketIOConnectRequest(auth: auth, connection: self)
        switch namespace.handlers.withLock({ $0.connect }) {
        case .immediate(let decide):
            decided(decide(socket, request), socket: socket)
            return true
        case .async(let decide):
            Task {
                self.decided(await decide(socket, request), socket: socket)
                self.drain()
            }
            return false
        }
    }

    private func decided(_ outcome: NamespaceCore.ConnectOutcome, socket: SocketIOSocket) {
        switch outcome {
        case .accept(let context):
            let first = dispatch.withLock { dispatch -> Bool in
                let first = dispatch.sockets.isEmpty
                dispatch.sockets.insert(socket)
                return first
            }
            transport.hasConnected.store(true, ordering: .relaxed)
            if first { transport.countConnected() }
            socket.accepted(context: context)
        case .refuse(let message, let data):
            socket.ended()
            transport.send(SocketIOFrame.connectError(message: message, data: data, namespace: socket.namespace))
        }
    }

    private func disconnect(_ sockets: [SocketIOSocket], reason: SocketIODisconnectReason) -> Bool {
        if dispatch.withLock({ $0.sockets.isEmpty }) { transport.countDisconnected() }
        var handlers: [(SocketIOSocket, @Sendable (SocketIOSocket, SocketIODisconnectReason) async -> Void)] = []
        for socket in sockets where socket.ended() {
            if let handler = socket.namespaceCore.handlers.withLock({ $0.disconnect }) { handlers.append((socket, handler)) }
        }
        guard !handlers.isEmpty else { return true }
        Task {
            for (socket, handler) in handlers { await handler(socket, reason) }
            self.drain()
        }
        return false
    }
}

