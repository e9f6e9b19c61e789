import Logging
import RoomcastCore
import ServiceLifecycle
import Synchronization

/// Keeps this node's sockets present: in the rooms they joined, and in their user's count of
/// connected sockets. It records them, and refreshes their Redis members before they expire. If
/// the node dies, nobody refreshes them and they expire on their own, so rooms never show a
/// crashed node's users as present for long, nor do its sockets hold up their users' limit.
final class PresenceKeeper: Service, Sendable {
    private let store: PresenceStore
    private let sockets: UserSocketStore
    private let interval: Duration
    private let logger: Logger
    // Mutexes: sockets on every event loop come and go while the refresh loop reads.
    private let members = Mutex<[RoomID: Set<String>]>([:])
    private let connected = Mutex<[UserID: Set<String>]>([:])
    private let socketCount = Atomic<Int>(0)

    init(store: PresenceStore, sockets: UserSocketStore, interval: Duration, logger: Logger) {
        self.store = store
        self.sockets = sockets
        self.interval = interval
        self.logger = logger
    }

    /// A socket authenticated as `user`: it counts against the user's sockets from now on.
    /// - Returns: the user and the offset of their newest event (the socket gets the ones after
    ///   it); nil, counting nothing, when the user does not exist.
    /// - Throws: `limit_exceeded` when the user has `limit` sockets connected already.
    func open(_ socket: String, of user: UserID, limit: Int) async throws(RoomcastError) -> UserSocketStore.OpenedSocket? {
        guard let opened = try await sockets.openConnected(socket, of: user, limit: limit) else { return nil }
        connected.withLock { _ = $0[user, default: []].insert(socket) }
        socketCount.add(1, ordering: .relaxed)
        return opened
    }

    /// Sockets connected to this node now (opened and not closed), for the node registry.
    var connectedSockets: Int { socketCount.load(ordering: .relaxed) }

    /// A counted socket closed.
    func close(_ socket: String, of user: UserID) async {
        socketCount.subtract(1, ordering: .relaxed)
        connected.withLock { connected in
            connected[user]?.remove(socket)
            if connected[user]?.isEmpty == true { connected[user] = nil }
        }
        do {
            try await sockets.close(socket, of: user)
        } catch {
            logger.debug("socket count release failed", metadata: ["user": "\(user)", "error": "\(error)"])
        }
    }

    /// A socket opened a room: present from now, unseen counts reset.
    func join(_ room: RoomID, user: UserID, socket: String) async throws(RoomcastError) -> PresenceStore.Joined {
        let member = PresenceStore.member(user: user, socket: socket)
        members.withLock { _ = $0[room, default: []].insert(member) }
        return try await store.join(room, user: user, socket: socket)
    }

    /// A socket left a room or disconnected.
    func leave(_ room: RoomID, user: UserID, socket: String) async {
        let member = PresenceStore.member(user: user, socket: socket)
        members.withLock { members in
            members[room]?.remove(member)
            if members[room]?.isEmpty == true { members[room] = nil }
        }
        do {
            try await store.leave(room, user: user, socket: socket)
        } catch {
            // The member expires by itself within its lifetime.
            logger.debug("presence leave failed", metadata: ["room": "\(room)", "error": "\(error)"])
        }
    }

    func run() async throws {
        // Stops with the node's graceful shutdown too (not only on cancellation): otherwise the
        // service group waits on this loop forever and SIGTERM never ends the process.
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                guard (try? await Task.sleep(for: self.interval)) != nil else { return }
                await self.refresh()
            }
        }
    }

    private func refresh() async {
        do {
            try await sockets.refresh(connected.withLock { $0 })
        } catch {
            logger.warning("socket count refresh failed", metadata: ["error": "\(error)"])
        }
        let snapshot = members.withLock { $0 }
        for (room, roomMembers) in snapshot {
            do {
                let gone = try await store.refresh(room, members: Array(roomMembers))
                guard !gone.isEmpty else { continue }
                // Gone from Redis but still held here (Redis lost or expired them while it was
                // away): add them back. Ones that left meanwhile are no longer in `members`.
                let held = members.withLock { Set(gone).intersection($0[room] ?? []) }
                if !held.isEmpty {
                    logger.notice("presence restored", metadata: ["room": "\(room)", "sockets": "\(held.count)"])
                    try await store.refresh(room, members: Array(held), restoring: true)
                }
            } catch {
                logger.warning("presence refresh failed", metadata: ["room": "\(room)", "error": "\(error)"])
            }
        }
    }
}
