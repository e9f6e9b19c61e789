public import Foundation
public import NIOCore
import Synchronization

/// A namespace's handlers and adapter, for every socket of the namespace (not generic: the
/// connection reaches it by name).
final class NamespaceCore: Sendable {
    /// Decides a CONNECT: at once on the connection's event loop, or in a task.
    enum ConnectHandler: Sendable {
        case immediate(@Sendable (SocketIOSocket, SocketIOConnectRequest) -> ConnectOutcome)
        case async(@Sendable (SocketIOSocket, SocketIOConnectRequest) async -> ConnectOutcome)
    }

    enum ConnectOutcome: Sendable {
        case accept(any Sendable)
        case refuse(message: String, data: ByteBuffer?)
    }

    typealias EventRoute = @Sendable (SocketIOSocket, SocketIOEvent) -> SocketIOEventRoute

    struct Handlers: Sendable {
        var connect: ConnectHandler
        var events: [String: EventRoute] = [:]
        var anyEvent: EventRoute?
        var disconnect: (@Sendable (SocketIOSocket, SocketIODisconnectReason) async -> Void)?
        var deadlineApproaching: (@Sendable (SocketIOSocket, Date) -> Void)?
        var deadline: (@Sendable (SocketIOSocket) -> Void)?
        var order = SocketIOEventOrder.arrival
    }

    let name: String
    let adapter: any SocketIOAdapter
    let handlers: Mutex<Handlers>
    let errors = Mutex<(@Sendable (SocketIOSocket, SocketIOEvent, any Error) -> Void)?>(nil)

    init(name: String, adapter: any SocketIOAdapter, connect: ConnectHandler) {
        self.name = name
        self.adapter = adapter
        self.handlers = Mutex(Handlers(connect: connect))
    }

    /// Tells the error handler, if any.
    func failed(_ socket: SocketIOSocket, _ event: SocketIOEvent, _ error: any Error) {
        errors.withLock { $0 }?(socket, event, error)
    }

    /// The route of `event`: its own handler's, the catch-all's, or none (ignored, as Socket.IO
    /// servers ignore events nobody listens to).
    func route(_ event: SocketIOEvent, of socket: SocketIOSocket) -> SocketIOEventRoute {
        guard let route = handlers.withLock({ $0.events[event.name] ?? $0.anyEvent }) else { return .handled }
        return route(socket, event)
    }
}

/// A namespace of a ``SocketServer``: its handlers, set up before the server serves, and its
/// broadcasts.
///
/// `Context` is what a socket is accepted with (``SocketIOConnectDecision/accept(_:)``), handed
/// to the socket's event handlers with each event: the user it authenticated as, say.
public struct SocketIONamespace<Context: Sendable>: Sendable {
    let core: NamespaceCore

    /// The namespace's name (`/`, `/admin`, …).
    public var name: String { core.name }

    /// The namespace's adapter.
    public var adapter: any SocketIOAdapter { core.adapter }

    /// Decides each CONNECT at once, on the connection's event loop: no task is started for it.
    /// Without a connect handler, a namespace whose context is `Void` accepts every socket and
    /// any other refuses them.
    public func onConnect(_ handler: @escaping @Sendable (SocketIOSocket, SocketIOConnectRequest) -> SocketIOConnectDecision<Context>) {
        core.handlers.withLock { $0.connect = .immediate { socket, request in handler(socket, request).outcome } }
    }

    /// Decides each CONNECT in a task, for a decision that awaits (a database, say).
    public func onConnect(_ handler: @escaping @Sendable (SocketIOSocket, SocketIOConnectRequest) async -> SocketIOConnectDecision<Context>) {
        core.handlers.withLock { $0.connect = .async { socket, request in await handler(socket, request).outcome } }
    }

    /// Handles event `event`: its first argument decoded as `Payload` (each placeholder as its
    /// attachment, for `Data`), the handler's result the ack's one argument when the client asked
    /// for one (return ``SocketIOArguments/none`` for none, or `SocketIOArguments` to send as they are).
    ///
    /// An event whose payload does not decode, or whose handler throws, goes to ``onError(_:)``.
    /// - Parameters:
    ///   - orderedBy: with ``SocketIOEventOrder/perKey``, the key that orders the event against
    ///     the socket's others.
    public func on<Payload: Decodable & Sendable, Reply: Encodable & Sendable>(
        _ event: String, _ payload: Payload.Type = Payload.self, orderedBy key: (@Sendable (Payload) -> String?)? = nil,
        _ handler: @escaping @Sendable (SocketIOSocket, Context, Payload) async throws -> Reply
    ) {
        let core = self.core
        let route: NamespaceCore.EventRoute = { socket, incoming in
            guard let context = socket.context(as: Context.self) else { return .handled }
            let payload: Payload
            do {
                payload = try incoming.arguments.decode(Payload.self)
            } catch {
                core.failed(socket, incoming, error)
                return .handled
            }
            return .run(orderedBy: key?(payload)) {
                do {
                    let reply = try await handler(socket, context, payload)
                    if let id = incoming.ackID { try socket.ack(id, with: reply) }
                } catch {
                    core.failed(socket, incoming, error)
                }
            }
        }
        core.handlers.withLock { $0.events[event] = route }
    }

    /// Handles every event that has no handler of its own, in two steps: `route` runs as the
    /// packet arrives, on the connection's event loop (decode, check, answer what it can), and
    /// returns the rest to run in order (``SocketIOEventRoute/run(orderedBy:_:)``), or
    /// ``SocketIOEventRoute/handled``.
    public func onAnyEvent(_ route: @escaping @Sendable (SocketIOSocket, Context, SocketIOEvent) -> SocketIOEventRoute) {
        core.handlers.withLock {
            $0.anyEvent = { socket, event in
                guard let context = socket.context(as: Context.self) else { return .handled }
                return route(socket, context, event)
            }
        }
    }

    /// Called when a socket leaves the namespace, for whatever reason; its rooms are left already.
    public func onDisconnect(_ handler: @escaping @Sendable (SocketIOSocket, Context, SocketIODisconnectReason) async -> Void) {
        core.handlers.withLock {
            $0.disconnect = { socket, reason in
                guard let context = socket.context(as: Context.self) else { return }
                await handler(socket, context, reason)
            }
        }
    }

    /// Called, on the connection's event loop, when the connection's deadline
    /// (``SocketIOSocket/setDeadline(_:)``) is within ``EngineIOSettings/deadlineWarning``.
    public func onDeadlineApproaching(_ handler: @escaping @Sendable (SocketIOSocket, Context, Date) -> Void) {
        core.handlers.withLock {
            $0.deadlineApproaching = { socket, deadline in
                guard let context = socket.context(as: Context.self) else { return }
                handler(socket, context, deadline)
            }
        }
    }

    /// Called, on the connection's event loop, when the deadline passed: what the client should
    /// be told goes out now; the connection closes right after.
    public func onDeadline(_ handler: @escaping @Sendable (SocketIOSocket, Context) -> Void) {
        core.handlers.withLock {
            $0.deadline = { socket in
                guard let context = socket.context(as: Context.self) else { return }
                handler(socket, context)
            }
        }
    }

    /// Called when an event's payload does not decode or its handler throws; by default nothing
    /// is done (the client's ack, if it asked for one, never comes).
    public func onError(_ handler: @escaping @Sendable (SocketIOSocket, SocketIOEvent, any Error) -> Void) {
        core.errors.withLock { $0 = handler }
    }

    /// How the events of one socket are ordered (``SocketIOEventOrder/arrival`` by default).
    public func order(_ order: SocketIOEventOrder) {
        core.handlers.withLock { $0.order = order }
    }

    // MARK: Broadcasting

    /// Broadcasts to `room`.
    public func to(_ room: String) -> BroadcastOperator {
        BroadcastOperator(namespace: core).to(room)
    }

    /// Broadcasts to the whole namespace but the sockets in `room`.
    public func except(_ room: String) -> BroadcastOperator {
        BroadcastOperator(namespace: core).except(room)
    }

    /// Sends event `event` to every socket of the namespace.
    public func emit(_ event: String, _ payload: some Encodable) throws {
        try BroadcastOperator(namespace: core).emit(event, payload)
    }
}

extension SocketIOConnectDecision {
    var outcome: NamespaceCore.ConnectOutcome {
        switch kind {
        case .accept(let context): return .accept(context)
        case .refuse(let message, let data): return .refuse(message: message, data: data)
        }
    }
}
