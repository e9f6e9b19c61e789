import SocketIO

/// Whom a broadcast goes to: rooms, exclusions and flags, set up by chaining, then sent with
/// `emit`: `socket.to("lobby").emit("joined", user)`, `server.namespace("/").except("muted").emit(...)`.
///
/// The packet is encoded once and handed to the namespace's adapter, which writes it to each
/// recipient.
public struct BroadcastOperator: Sendable {
    let namespace: NamespaceCore
    private var rooms: [String] = []
    private var exceptRooms: [String] = []
    private var exceptSockets: [SocketIOSocketID] = []
    private var isVolatile = false

    init(namespace: NamespaceCore) {
        self.namespace = namespace
    }

    /// Also to the sockets in `room` (with no room, the broadcast goes to the whole namespace).
    public func to(_ room: String) -> Self {
        var copy = self
        copy.rooms.append(room)
        return copy
    }

    /// Not to the sockets in `room`.
    public func except(_ room: String) -> Self {
        var copy = self
        copy.exceptRooms.append(room)
        return copy
    }

    /// Not to `socket`.
    public func except(_ socket: SocketIOSocket) -> Self {
        var copy = self
        copy.exceptSockets.append(socket.id)
        return copy
    }

    /// Dropped, rather than held, for a socket that is joining the room (a cursor position,
    /// worthless once a newer one comes).
    public var volatile: Self {
        var copy = self
        copy.isVolatile = true
        return copy
    }

    /// Sends event `event` with `payload` as its one argument (each `Data` in it a binary attachment).
    /// - Throws: what `JSONEncoder` throws for `payload`.
    public func emit(_ event: String, _ payload: some Encodable) throws {
        emit(event, arguments: try SocketIOArguments(payload))
    }

    /// Sends event `event` with `arguments` as they are.
    public func emit(_ event: String, arguments: SocketIOArguments = .none) {
        let packet = SocketIOFrame.event(
            name: event, arguments: arguments.json, namespace: namespace.name, attachments: arguments.attachmentCount
        )
        emit(frames: [OutboundFrame(packet: packet)] + arguments.attachments.map(OutboundFrame.init(binary:)))
    }

    /// Sends frames encoded already: a packet (`4…`) and its attachments.
    /// - Parameter position: where the broadcast stands in its room's stream, for joins with a
    ///   snapshot; nil for none.
    public func emit(frames: [OutboundFrame], position: BroadcastPosition? = nil) {
        namespace.adapter.broadcast(
            SocketIOBroadcast(
                namespace: namespace.name, frames: frames, rooms: rooms, exceptRooms: exceptRooms, exceptSockets: exceptSockets,
                position: position, isVolatile: isVolatile
            )
        )
    }
}
