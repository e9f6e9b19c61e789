import Logging
import RoomcastCore
import ServiceLifecycle
import Synchronization

/// Keeps this node's sockets present in the rooms they joined: it records them, and refreshes
/// their Redis members before they expire. If the node dies, nobody refreshes them and they
/// expire on their own, so rooms never show a crashed node's users as present for long.
final class PresenceKeeper: Service, Sendable {
    private let store: PresenceStore
    private let interval: Duration
    private let logger: Logger
    // A mutex: sockets on every event loop join and leave while the refresh loop reads.
    private let members = Mutex<[RoomID: Set<String>]>([:])

    init(store: PresenceStore, interval: Duration, logger: Logger) {
        self.store = store
        self.interval = interval
        self.logger = logger
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
        let snapshot = members.withLock { $0 }
        for (room, roomMembers) in snapshot {
            do {
                try await store.refresh(room, members: Array(roomMembers))
            } catch {
                logger.warning("presence refresh failed", metadata: ["room": "\(room)", "error": "\(error)"])
            }
        }
    }
}
