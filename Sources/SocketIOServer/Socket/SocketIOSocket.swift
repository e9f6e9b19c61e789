public import Foundation
public import NIOCore
import SocketIO
import Synchronization
public import NIOWebSocket
public import WebSocketServer

/// One client's connection to one namespace: what a Socket.IO server calls a socket.
///
/// Made when the client's CONNECT arrives, handed to the namespace's connect handler, and, once
/// accepted, to its event handlers with each event. Anything may use it from any thread.
public final class SocketIOSocket: Hashable, Sendable {
    /// The socket's id: the `sid` of its CONNECT answer.
    public let id: SocketIOSocketID
    let namespaceCore: NamespaceCore
    let connection: SocketIOConnection
    private let state: Mutex<State>

    enum Phase {
        /// The connect handler is deciding: joins wait for the CONNECT answer to go first.
        case connecting
        case connected
        case disconnected
    }

    private struct State {
        var phase = Phase.connecting
        /// What the connect handler accepted the socket with.
        var context: (any Sendable)?
        var rooms = InlineSet<String>()
        var calls: [Int: PendingCall] = [:]
        var nextCallID = 0
        /// While connecting: joins completed before the CONNECT answer, and the deadline set.
        var deferred: Deferred?
    }

    /// What waits for the CONNECT answer (boxed: a connected socket keeps none).
    private final class Deferred: @unchecked Sendable {
        enum Item {
            case frames([OutboundFrame])
            case join(room: String, frames: [OutboundFrame], position: BroadcastPosition?)
        }
        var items: [Item] = []
        var deadline: Date??
    }

    /// A server-to-client call waiting for its ack.
    private struct PendingCall {
        var continuation: CheckedContinuation<SocketIOArguments, any Error>
        var timeout: Scheduled<Void>?
    }

    init(namespace: NamespaceCore, connection: SocketIOConnection) {
        self.id = .random()
        self.namespaceCore = namespace
        self.connection = connection
        self.state = Mutex(State())
    }

    /// The namespace it connected to (`/`, `/admin`, …).
    public var namespace: String { namespaceCore.name }

    /// The Engine.IO session it runs on (``SocketServer/Configuration/sessionID``): shared by the
    /// client's sockets in every namespace, and by no other client.
    public var sessionID: String { connection.transport.id }

    /// The event loop its frames are written from.
    public var eventLoop: any EventLoop { connection.transport.eventLoop }

    /// Whether the socket is connected: accepted, and not disconnected yet.
    public var isConnected: Bool { state.withLock { $0.phase == .connected } }

    /// The rooms it is in.
    public var rooms: [String] { state.withLock { Array($0.rooms) } }

    /// What its connect handler accepted it with, as `type`; nil before it was accepted.
    public func context<Context>(as type: Context.Type) -> Context? {
        state.withLock { $0.context } as? Context
    }

    /// The same socket.
    public static func == (lhs: SocketIOSocket, rhs: SocketIOSocket) -> Bool { lhs === rhs }
    /// Hashes the socket's identity.
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }

    // MARK: Sending

    /// Sends event `event` with `payload` as its one argument (each `Data` in it a binary attachment).
    /// - Throws: what `JSONEncoder` throws for `payload`.
    public func emit(_ event: String, _ payload: some Encodable) throws {
        emit(event, arguments: try SocketIOArguments(payload))
    }

    /// Sends event `event` with `arguments` as they are.
    public func emit(_ event: String, arguments: SocketIOArguments = .none) {
        send(SocketIOFrame.event(name: event, arguments: arguments.json, namespace: namespace, attachments: arguments.attachmentCount), attachments: arguments.attachments)
    }

    /// Answers the client's event that asked for ack `id`.
    public func ack(_ id: Int, with arguments: SocketIOArguments = .none) {
        send(SocketIOFrame.ack(id: id, arguments: arguments.json, namespace: namespace, attachments: arguments.attachmentCount), attachments: arguments.attachments)
    }

    /// Answers the client's event that asked for ack `id` with `reply` as its one argument.
    /// - Throws: what `JSONEncoder` throws for `reply`.
    public func ack(_ id: Int, with reply: some Encodable) throws {
        ack(id, with: try SocketIOArguments(reply))
    }

    /// Sends a Socket.IO packet built already (`SocketIOFrame`: `4` and the packet), and the
    /// binary attachments its placeholders stand for, together. While the connect handler is
    /// deciding, what is sent waits for the CONNECT answer to go first (and is dropped if the
    /// socket is refused).
    public func send(_ packet: ByteBuffer, attachments: [ByteBuffer] = []) {
        if state.withLock({ $0.phase == .connecting }), deferUntilConnected(.frames([OutboundFrame(packet: packet)] + attachments.map(OutboundFrame.init(binary:)))) {
            return
        }
        if attachments.isEmpty {
            connection.transport.send(packet)
        } else {
            connection.transport.send([OutboundFrame(packet: packet)] + attachments.map(OutboundFrame.init(binary:)))
        }
    }

    /// Keeps `item` for the CONNECT answer; false once the socket is past connecting.
    private func deferUntilConnected(_ item: Deferred.Item) -> Bool {
        state.withLock { state -> Bool in
            guard state.phase == .connecting else { return false }
            let deferred = state.deferred ?? Deferred()
            deferred.items.append(item)
            state.deferred = deferred
            return true
        }
    }

    /// Sends event `event` and waits for the client's ack.
    /// - Returns: the ack's arguments.
    /// - Throws: ``SocketIOCallError/timedOut`` when no ack came within `timeout`;
    ///   ``SocketIOCallError/disconnected`` when the socket disconnected first.
    public func call(_ event: String, arguments: SocketIOArguments = .none, timeout: Duration) async throws -> SocketIOArguments {
        try await withCheckedThrowingContinuation { continuation in
            let id = state.withLock { state -> Int? in
                guard state.phase == .connected else { return nil }
                let id = state.nextCallID
                state.nextCallID = id == Int.max ? 0 : id + 1
                state.calls[id] = PendingCall(continuation: continuation)
                return id
            }
            guard let id else { return continuation.resume(throwing: SocketIOCallError.disconnected) }
            let timer = eventLoop.scheduleTask(in: TimeAmount(timeout)) { [self] () -> Void in
                guard let call = state.withLock({ $0.calls.removeValue(forKey: id) }) else { return }
                call.continuation.resume(throwing: SocketIOCallError.timedOut)
            }
            let answered = state.withLock { state -> Bool in
                guard state.calls[id] != nil else { return true }
                state.calls[id]!.timeout = timer
                return false
            }
            if answered { timer.cancel() }
            send(
                SocketIOFrame.event(name: event, arguments: arguments.json, namespace: namespace, ackId: id, attachments: arguments.attachmentCount),
                attachments: arguments.attachments
            )
        }
    }

    /// Sends event `event` with `payload` and waits for the client's ack.
    public func call(_ event: String, _ payload: some Encodable, timeout: Duration) async throws -> SocketIOArguments {
        try await call(event, arguments: try SocketIOArguments(payload), timeout: timeout)
    }

    /// The client's ack of a call arrived.
    func answered(_ id: Int, with arguments: SocketIOArguments) {
        guard let call = state.withLock({ $0.calls.removeValue(forKey: id) }) else { return }
        call.timeout?.cancel()
        call.continuation.resume(returning: arguments)
    }

    // MARK: Broadcasting

    /// Broadcasts to `room`, except to this socket.
    public func to(_ room: String) -> BroadcastOperator {
        BroadcastOperator(namespace: namespaceCore).to(room).except(self)
    }

    /// Broadcasts to the whole namespace, except to this socket.
    public var broadcast: BroadcastOperator {
        BroadcastOperator(namespace: namespaceCore).except(self)
    }

    // MARK: Rooms

    /// Joins `room`: broadcasts to it reach the socket once this returns.
    /// - Throws: what the adapter's confirmation fails with (the socket is then not in the room).
    public func join(_ room: String) async throws {
        let join = beginJoin(room)
        try await join.confirmed()
        join.complete()
    }

    /// Joins `room`, sending what `snapshot` returns before any broadcast to it: the broadcasts
    /// that arrive while the snapshot is read are held, then sent, except those no newer than
    /// the snapshot's position (it holds them already). Joining a room it is in already reads a
    /// new snapshot the same way.
    /// - Throws: what the adapter or `snapshot` throws (a new member then leaves the room; a
    ///   member it was already gets the held broadcasts).
    public func join(_ room: String, snapshot: () async throws -> RoomSnapshot) async throws {
        let join = beginJoin(room)
        do {
            try await join.confirmed()
            let read = try await snapshot()
            join.complete(sending: read.packets, upTo: read.position)
        } catch {
            join.cancel()
            throw error
        }
    }

    /// Starts joining `room`: its broadcasts are held from now on, and the adapter adds the
    /// socket. The lower level of ``join(_:snapshot:)``, for a joiner that reads its snapshot
    /// while the adapter confirms.
    public func beginJoin(_ room: String) -> RoomJoin {
        connection.transport.beginJoin(.init(namespace: namespace, room: room))
        let isNew = state.withLock { $0.rooms.insert(room) }
        let confirmation = isNew ? namespaceCore.adapter.add(self, to: room) : .done
        return RoomJoin(socket: self, room: room, isNew: isNew, confirmation: confirmation)
    }

    /// Leaves `room` (nothing happens when it is not in it).
    public func leave(_ room: String) {
        guard state.withLock({ $0.rooms.remove(room) }) != nil else { return }
        namespaceCore.adapter.remove(self, from: room)
    }

    /// Releases a join's held broadcasts after `frames`: now, or, while the connect handler is
    /// deciding, once the CONNECT answer is sent.
    func completeJoin(_ room: String, sending frames: [OutboundFrame], upTo position: BroadcastPosition?) {
        guard !deferUntilConnected(.join(room: room, frames: frames, position: position)) else { return }
        connection.transport.completeJoin(.init(namespace: namespace, room: room), sending: frames, upTo: position)
    }

    func abandonJoin(_ room: String) {
        connection.transport.abandonJoin(.init(namespace: namespace, room: room))
    }

    /// Delivers a broadcast to `room` to this socket, one of its members on this node (an
    /// adapter's part): at once, or held while the socket joins the room, or dropped when the
    /// snapshot just sent holds it already (its position is no newer).
    /// - Returns: the connection written to without a flush, for the caller to flush once for
    ///   all it delivers in a batch; nil when the frame was queued, held or dropped.
    public func deliver(_ frame: OutboundFrame, to room: String, position: BroadcastPosition? = nil) -> NIOLoopBound<WebSocketConnectionHandler>? {
        connection.transport.deliver(frame, to: room, of: namespace, position: position)
    }

    /// Delivers a volatile broadcast to `room`: as ``deliver(_:to:position:)``, except that it is
    /// dropped rather than held while the socket joins the room.
    public func deliverVolatile(_ frame: OutboundFrame, to room: String) -> NIOLoopBound<WebSocketConnectionHandler>? {
        connection.transport.deliverVolatile(frame, to: room, of: namespace)
    }

    /// Delivers frames of a broadcast through the room's join hold.
    func deliver(_ frames: [OutboundFrame], to room: String, position: BroadcastPosition?, isVolatile: Bool) -> NIOLoopBound<WebSocketConnectionHandler>? {
        if frames.count == 1 {
            return isVolatile ? deliverVolatile(frames[0], to: room) : deliver(frames[0], to: room, position: position)
        }
        if !isVolatile { connection.transport.deliver(frames, to: room, of: namespace, position: position) }
        return nil
    }

    // MARK: Lifetime

    /// The connection now ends at `deadline` (nil: never): the namespace's
    /// ``SocketIONamespace/onDeadlineApproaching(_:)`` handler is told
    /// ``EngineIOSettings/deadlineWarning`` before, its ``SocketIONamespace/onDeadline(_:)``
    /// handler at the deadline, and the connection closes then. Set while connecting, it takes
    /// effect once the CONNECT answer is sent.
    public func setDeadline(_ deadline: Date?) {
        let deferred = state.withLock { state -> Bool in
            guard state.phase == .connecting else { return false }
            let deferred = state.deferred ?? Deferred()
            deferred.deadline = .some(deadline)
            state.deferred = deferred
            return true
        }
        if !deferred { connection.transport.setDeadline(deadline) }
    }

    /// Removes the socket from its namespace (the client gets DISCONNECT), or closes the whole
    /// connection.
    public func disconnect(closingConnection: Bool = false) {
        if closingConnection {
            closeConnection(.normalClosure, reason: "closed by the server")
        } else {
            send(SocketIOFrame.disconnect(namespace: namespace))
            connection.serverDisconnected(namespace)
        }
    }

    /// Closes the connection the socket runs on (every namespace of the client): frames already
    /// queued are sent first, then a close frame with `code` and `reason` (over long-polling,
    /// Engine.IO's close packet).
    public func closeConnection(_ code: WebSocketErrorCode, reason: String) {
        connection.transport.close(code, reason: reason)
    }

    /// Accepted: the CONNECT answer goes out, then what waited for it.
    func accepted(context: any Sendable) {
        let deferred = state.withLock { state -> Deferred? in
            state.context = context
            state.phase = .connected
            defer { state.deferred = nil }
            return state.deferred
        }
        connection.transport.send(SocketIOFrame.connect(sid: id.description, namespace: namespace))
        if let deferred {
            if let deadline = deferred.deadline { connection.transport.setDeadline(deadline) }
            for item in deferred.items {
                switch item {
                case .frames(let frames):
                    connection.transport.send(frames)
                case .join(let room, let frames, let position):
                    connection.transport.completeJoin(.init(namespace: namespace, room: room), sending: frames, upTo: position)
                }
            }
        }
        namespaceCore.adapter.connected(self)
    }

    /// Refused or disconnected: leaves every room and fails the calls waiting.
    /// - Returns: whether it was connected.
    @discardableResult
    func ended() -> Bool {
        let (wasConnected, rooms, calls) = state.withLock { state in
            let wasConnected = state.phase == .connected
            state.phase = .disconnected
            state.deferred = nil
            defer {
                state.rooms = []
                state.calls = [:]
            }
            return (wasConnected, state.rooms, state.calls)
        }
        for room in rooms {
            namespaceCore.adapter.remove(self, from: room)
            abandonJoin(room)
        }
        if wasConnected { namespaceCore.adapter.disconnected(self) }
        for call in calls.values {
            call.timeout?.cancel()
            call.continuation.resume(throwing: SocketIOCallError.disconnected)
        }
        return wasConnected
    }
}

/// A join under way (``SocketIOSocket/beginJoin(_:)``): the room's broadcasts are held until it
/// completes or is cancelled.
public struct RoomJoin: Sendable {
    let socket: SocketIOSocket
    let room: String
    /// The socket was not in the room yet.
    let isNew: Bool
    let confirmation: SocketIOAdapterConfirmation

    /// Waits until the adapter confirms the socket gets the room's broadcasts.
    /// - Throws: what the adapter failed with; the join is then cancelled.
    public func confirmed() async throws {
        do {
            try await confirmation.wait()
        } catch {
            cancel()
            throw error
        }
    }

    /// Sends `packets` (built with `SocketIOFrame`), then the broadcasts held meanwhile that are
    /// newer than `position`, and goes live.
    public func complete(sending packets: [ByteBuffer] = [], upTo position: BroadcastPosition? = nil) {
        socket.completeJoin(room, sending: packets.map(OutboundFrame.init(packet:)), upTo: position)
    }

    /// Gives the join up: a socket that was in the room already gets the held broadcasts; one
    /// that was not leaves it, and they are dropped.
    public func cancel() {
        if isNew {
            socket.leave(room)
            socket.abandonJoin(room)
        } else {
            socket.completeJoin(room, sending: [], upTo: nil)
        }
    }
}

/// What a joiner gets before a room's broadcasts (``SocketIOSocket/join(_:snapshot:)``).
public struct RoomSnapshot: Sendable {
    /// Socket.IO packets built with `SocketIOFrame`, sent first.
    public var packets: [ByteBuffer]
    /// The position of the last broadcast the packets hold; nil when they hold none.
    public var position: BroadcastPosition?

    /// What a joiner gets first, and where it stands.
    public init(packets: [ByteBuffer], position: BroadcastPosition?) {
        self.packets = packets
        self.position = position
    }
}

/// Why a server-to-client call (``SocketIOSocket/call(_:arguments:timeout:)``) has no answer.
public enum SocketIOCallError: Error, Sendable {
    /// The client did not ack within the timeout.
    case timedOut
    /// The socket disconnected first.
    case disconnected
}

extension SocketIOArguments {
    /// The attachment count of the packet header; nil for a plain packet.
    var attachmentCount: Int? { attachments.isEmpty ? nil : attachments.count }
}
