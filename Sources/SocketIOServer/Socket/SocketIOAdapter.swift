public import NIOCore
public import WebSocketServer

/// Who is in which room, and how a broadcast reaches them: on this node only
/// (``InMemoryAdapter``), or on every node of a deployment (through a message bus).
///
/// A namespace has one adapter. The library calls it as sockets join and leave rooms, and hands
/// it every broadcast encoded once (``SocketIOBroadcast/frames``); the adapter delivers it to
/// each local member with ``SocketIOBroadcast/deliver(to:)``: a write, no encoding.
public protocol SocketIOAdapter: Sendable {
    /// `socket` joins `room`.
    /// - Returns: when broadcasts to the room reach the socket: at once (``SocketIOAdapterConfirmation/done``),
    ///   or once the adapter's message bus confirms a subscription.
    func add(_ socket: SocketIOSocket, to room: String) -> SocketIOAdapterConfirmation
    /// `socket` leaves `room`.
    func remove(_ socket: SocketIOSocket, from room: String)
    /// `socket` connected: broadcasts to the whole namespace reach it from now on.
    func connected(_ socket: SocketIOSocket)
    /// `socket` disconnected (it left its rooms already).
    func disconnected(_ socket: SocketIOSocket)
    /// Delivers `broadcast` to its recipients, on this node and, for an adapter that spans
    /// nodes, on the others.
    func broadcast(_ broadcast: SocketIOBroadcast)
}

extension SocketIOAdapter {
    /// Does nothing: an adapter that serves no broadcast to a whole namespace needs no list of sockets.
    public func connected(_ socket: SocketIOSocket) {}
    /// Does nothing.
    public func disconnected(_ socket: SocketIOSocket) {}
}

/// When a socket an adapter added to a room gets the room's broadcasts.
public struct SocketIOAdapterConfirmation: Sendable {
    let future: EventLoopFuture<Void>?

    private init(future: EventLoopFuture<Void>?) {
        self.future = future
    }

    /// At once.
    public static let done = Self(future: nil)

    /// When `future` succeeds; its failure fails the join.
    public init(_ future: EventLoopFuture<Void>) {
        self.init(future: future)
    }

    func wait() async throws {
        try await future?.get()
    }
}

/// One broadcast, encoded once, and whom it is for.
public struct SocketIOBroadcast: Sendable {
    /// The namespace it is sent in.
    public let namespace: String
    /// The packet (`4…`) and its binary attachments, encoded once for every recipient.
    public let frames: [OutboundFrame]
    /// The rooms it goes to; empty: the whole namespace.
    public let rooms: [String]
    /// Sockets in these rooms do not get it.
    public let exceptRooms: [String]
    /// These sockets do not get it.
    public let exceptSockets: [SocketIOSocketID]
    /// Where it stands in its room's stream, for joins with a snapshot; nil for none.
    public let position: BroadcastPosition?
    /// Dropped rather than held for a socket that is joining the room.
    public let isVolatile: Bool

    /// A broadcast of frames encoded already (a packet built elsewhere and carried as bytes).
    /// - Parameters:
    ///   - frames: the packet and its attachments.
    ///   - position: where it stands in its room's stream; nil for none.
    public init(
        namespace: String, frames: [OutboundFrame], rooms: [String] = [], exceptRooms: [String] = [], exceptSockets: [SocketIOSocketID] = [],
        position: BroadcastPosition? = nil, isVolatile: Bool = false
    ) {
        self.namespace = namespace
        self.frames = frames
        self.rooms = rooms
        self.exceptRooms = exceptRooms
        self.exceptSockets = exceptSockets
        self.position = position
        self.isVolatile = isVolatile
    }

    /// Writes the broadcast to `socket`, one of its recipients on this node, through the room's
    /// join hold (``SocketIOSocket/beginJoin(_:)``).
    /// - Parameter room: the room it reached the socket through; nil for the whole namespace.
    /// - Returns: the connection written to without a flush, for the caller to flush once for
    ///   all it delivers in a batch; nil when the frames were queued, held or dropped.
    @discardableResult
    public func deliver(to socket: SocketIOSocket, through room: String? = nil) -> NIOLoopBound<WebSocketConnectionHandler>? {
        socket.deliver(frames, to: room ?? rooms.first ?? "", position: position, isVolatile: isVolatile)
    }
}
