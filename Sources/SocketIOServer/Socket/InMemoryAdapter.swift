import NIOCore
import Synchronization
import WebSocketServer

/// The adapter of a server on one node: rooms are an index of this node's sockets, and a
/// broadcast is written to the recipients found in it. The default.
public final class InMemoryAdapter: SocketIOAdapter {
    private struct Index {
        var rooms: [String: InlineSet<SocketIOSocket>] = [:]
        /// Every connected socket, for broadcasts to the whole namespace.
        var sockets: Set<SocketIOSocket> = []
    }

    private let index = Mutex(Index())

    /// An adapter with no room yet.
    public init() {}

    /// Adds `socket` to the room's index: confirmed at once.
    public func add(_ socket: SocketIOSocket, to room: String) -> SocketIOAdapterConfirmation {
        index.withLock { $0.rooms[room, default: []].insert(socket) }
        return .done
    }

    /// Removes `socket` from the room's index.
    public func remove(_ socket: SocketIOSocket, from room: String) {
        index.withLock { index in
            guard index.rooms[room]?.remove(socket) != nil else { return }
            if index.rooms[room]?.isEmpty == true { index.rooms[room] = nil }
        }
    }

    /// Counts `socket` in the namespace's broadcasts.
    public func connected(_ socket: SocketIOSocket) {
        index.withLock { _ = $0.sockets.insert(socket) }
    }

    /// Stops counting `socket`.
    public func disconnected(_ socket: SocketIOSocket) {
        index.withLock { _ = $0.sockets.remove(socket) }
    }

    /// The sockets of `room` on this node.
    public func sockets(in room: String) -> [SocketIOSocket] {
        index.withLock { index in index.rooms[room].map { Array($0) } ?? [] }
    }

    /// Writes the broadcast to its recipients on this node.
    public func broadcast(_ broadcast: SocketIOBroadcast) {
        let recipients = index.withLock { index -> [(SocketIOSocket, String?)] in
            var excluded = Set<SocketIOSocket>()
            for room in broadcast.exceptRooms { excluded.formUnion(index.rooms[room] ?? []) }
            var recipients: [(SocketIOSocket, String?)] = []
            func consider(_ socket: SocketIOSocket, _ room: String?) {
                guard !broadcast.exceptSockets.contains(socket.id), excluded.insert(socket).inserted else { return }
                recipients.append((socket, room))
            }
            if broadcast.rooms.isEmpty {
                for socket in index.sockets { consider(socket, nil) }
            } else {
                for room in broadcast.rooms {
                    for socket in index.rooms[room] ?? [] { consider(socket, room) }
                }
            }
            return recipients
        }
        for (socket, room) in recipients {
            let written = broadcast.deliver(to: socket, through: room)
            written?.value.flush()
        }
    }
}
