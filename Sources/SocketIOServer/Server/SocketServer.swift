public import HTTPTypes
public import Hummingbird
public import NIOCore
public import ServiceLifecycle
import Synchronization
public import WebSocketServer

/// A Socket.IO v5 server: namespaces with their handlers, served over Engine.IO v4 long-polling
/// and WebSocket.
///
/// Set the namespaces up, then serve: ``serve(host:port:onReady:)`` runs a server of its own;
/// an application with an HTTP server of its own adds ``engine``'s routes to it and runs this
/// as one of its services (it closes the sessions still polling on a graceful shutdown).
///
/// ```swift
/// let server = SocketServer()
/// let chat = server.namespace("/", context: String.self)
/// chat.onConnect { socket, request in
///     guard let name = request.auth(as: Hello.self)?.name else { return .refuse("a name is required") }
///     return .accept(name)
/// }
/// chat.on("say", Said.self) { socket, name, said in
///     try socket.to(said.room).emit("said", said)
///     return OK()
/// }
/// try await server.serve(port: 3000)
/// ```
public final class SocketServer: Service, Sendable {
    /// What the server is, and holds its connections to.
    public struct Configuration: Sendable {
        /// The path it serves (`/socket.io`, with or without a trailing slash).
        public var path: String
        /// What every Engine.IO session is told in its open packet, and held to.
        public var engineIO: EngineIOSettings
        /// Bytes of packets waiting for their handlers on one connection: a client that sends
        /// without waiting for its acks is closed (1008) past it.
        public var inboundQueueBytes: Int
        /// The most binary attachments one packet may announce; more closes the connection.
        public var maxAttachments: Int
        /// The prefix of the server's metric names: `<prefix>sockets_connected{transport}`.
        public var metricsPrefix: String
        /// A new Engine.IO session id (by default 20 random characters): a deployment whose nodes
        /// route requests by session id puts the node's name in it.
        public var sessionID: @Sendable () -> String
        /// What a connection keeps of the request that opened it (a credential in its headers or
        /// query, say) for its CONNECT handlers (``SocketIOConnectRequest/handshake``); nil keeps
        /// nothing, as every idle connection would hold it.
        public var handshake: (@Sendable (EngineIOOpening) -> (any Sendable)?)?
        /// The adapter of each namespace, by its name (``InMemoryAdapter`` by default).
        public var adapter: @Sendable (String) -> any SocketIOAdapter

        /// A configuration; the session ids, the handshake kept and the adapter are set on it after.
        public init(
            path: String = "/socket.io", engineIO: EngineIOSettings = EngineIOSettings(), inboundQueueBytes: Int = 2 * 1024 * 1024,
            maxAttachments: Int = 64, metricsPrefix: String = "socketio_"
        ) {
            self.path = path
            self.engineIO = engineIO
            self.inboundQueueBytes = inboundQueueBytes
            self.maxAttachments = maxAttachments
            self.metricsPrefix = metricsPrefix
            self.sessionID = { RandomID.make() }
            self.handshake = nil
            self.adapter = { _ in InMemoryAdapter() }
        }
    }

    /// What the server was made with.
    public let configuration: Configuration
    /// The Engine.IO server it runs on: its polling routes and WebSocket upgrades.
    public let engine: EngineIOServer
    private let namespaces = Mutex<[String: NamespaceCore]>([:])
    private let hooks = Mutex(Hooks())

    struct Hooks {
        var undecodable: (@Sendable (String) -> Void)?
        var invalidNamespace: (@Sendable (String) -> Void)?
    }

    /// A server with no namespace yet: set them up before it serves.
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        let application = SocketIOOverEngineIO()
        self.engine = EngineIOServer(
            path: configuration.path, settings: configuration.engineIO, application: application,
            gauges: ConnectedGauges(prefix: configuration.metricsPrefix)
        )
        application.server.withLock { $0 = self }
    }

    /// The namespace `name`, whose sockets are accepted with no context (`/` by default).
    public func namespace(_ name: String = "/") -> SocketIONamespace<Void> {
        namespace(name, context: Void.self)
    }

    /// The namespace `name`, whose sockets are accepted with a `Context` each.
    /// - Precondition: the namespace is not set up with another context already.
    public func namespace<Context: Sendable>(_ name: String, context: Context.Type) -> SocketIONamespace<Context> {
        let core = namespaces.withLock { namespaces in
            if let existing = namespaces[name] { return existing }
            let made = NamespaceCore(
                name: name, adapter: configuration.adapter(name),
                connect: .immediate { _, _ in
                    // Without a connect handler: a namespace with nothing to be accepted with accepts.
                    Context.self == Void.self ? .accept(()) : .refuse(message: "Not authorized", data: nil)
                }
            )
            namespaces[name] = made
            return made
        }
        return SocketIONamespace(core: core)
    }

    func namespaceCore(_ name: String) -> NamespaceCore? {
        namespaces.withLock { $0[name] }
    }

    /// Broadcasts to `room` of the default namespace (`/`).
    public func to(_ room: String) -> BroadcastOperator {
        namespace().to(room)
    }

    /// Called, for logs and metrics, when a client sent what cannot be decoded; its connection
    /// closes.
    public func onUndecodable(_ handler: @escaping @Sendable (_ reason: String) -> Void) {
        hooks.withLock { $0.undecodable = handler }
    }

    /// Called, for logs and metrics, when a client's CONNECT named a namespace the server does
    /// not have; it was refused as the reference server refuses it
    /// (`44/<nsp>,{"message":"Invalid namespace"}`).
    public func onInvalidNamespace(_ handler: @escaping @Sendable (_ namespace: String) -> Void) {
        hooks.withLock { $0.invalidNamespace = handler }
    }

    func undecodable(_ reason: String) {
        hooks.withLock { $0.undecodable }?(reason)
    }

    func invalidNamespace(_ namespace: String) {
        hooks.withLock { $0.invalidNamespace }?(namespace)
    }

    /// Runs until the graceful shutdown, then closes the sessions still polling so their clients
    /// reconnect elsewhere.
    public func run() async {
        await engine.run()
    }
}

/// Socket.IO as an Engine.IO application: a ``SocketIOConnection`` per session. A class: the
/// server refers to it, and it to the server, once both are made.
final class SocketIOOverEngineIO: EngineIOApplication {
    let server = Mutex<SocketServer?>(nil)

    func makeSessionID() -> String {
        server.withLock { $0! }.configuration.sessionID()
    }

    func handler(for session: EngineIOConnection, opening: EngineIOOpening) -> any EngineIOSessionHandler {
        let server = self.server.withLock { $0! }
        return SocketIOConnection(transport: session, server: server, handshake: server.configuration.handshake?(opening))
    }
}
