import Logging
import RoomcastCore
import ServiceLifecycle
import SocketIOServer
import Synchronization

/// Keeps this node's sockets present: in the rooms they joined, and in their user's count of
/// connected sockets.
///
/// Their Redis members live as long as this node's lease in the node registry: the node names
/// every room and user where it put members in its index (``NodeIndex``, once per room or user,
/// not per socket), and when the node dies the other nodes' reapers (``NodeReaper``) remove its
/// members and announce it. So holding sockets costs Redis nothing per interval but the node's
/// heartbeat. Each member also expires on its own after `presence.backstop_ms` unless refreshed
/// here every third of it, for members an index lost; that refresh also puts back members Redis
/// lost, and runs at once when the node learns its lease lapsed while it was alive (reapers may
/// have taken its members).
final class PresenceKeeper: Service, Sendable {
    private let store: PresenceStore
    private let sockets: UserSocketStore
    private let gaps: any UserEventGaps
    private let index: NodeIndex
    private let interval: Duration
    private let logger: Logger
    // A mutex: sockets on every event loop come and go while the refresh reads.
    private let state = Mutex<State>(State())
    private let socketCount = Atomic<Int>(0)
    /// Leaves and closes sent to Redis and not answered yet.
    private let removalsInFlight = Atomic<Int>(0)

    private struct State {
        /// Presence members held, by room.
        var members: [RoomID: Set<Member>] = [:]
        /// Sockets counted, by user.
        var connected: [UserID: InlineSet<String>] = [:]
        /// Sockets being counted (their CONNECT's script under way), by user: their users stay
        /// in the index.
        var opening: [UserID: Int] = [:]
        /// Rooms and users in this node's index (a superset of the held ones until pruned).
        var indexedRooms: Set<RoomID> = []
        var indexedUsers: Set<UserID> = []
        /// Index writes under way: a join or socket that needs the same entry waits for that
        /// write rather than being answered before it.
        var roomIndexWrites: [RoomID: Task<Bool, Never>] = [:]
        var userIndexWrites: [UserID: Task<Bool, Never>] = [:]
        /// The entries of the next index write, whose task has not taken them yet: entries
        /// needed meanwhile join it, so that many sockets arriving at once (a reconnect storm)
        /// cost Redis one write, not one each.
        var nextIndexWrite: (rooms: [RoomID], users: [UserID], task: Task<Bool, Never>)?
        /// Leaves and closes that failed (Redis away), retried after each heartbeat.
        var failed: Set<Removal> = []
        /// Restoring refreshes still to run after a lapsed lease (see ``afterHeartbeat(lapsed:)``).
        var restoresDue = 0
        /// A restoring refresh is running.
        var restoreRunning = false
    }

    /// A presence member held: its user and socket ids, shared with the socket's own, where
    /// Redis's `<userId>|<socketId>` text would be a string per joined socket (about 150 bytes).
    private struct Member: Hashable {
        var user: UserID
        var socket: String

        /// The member as Redis names it.
        var text: String { PresenceStore.member(user: user, socket: socket) }
    }

    /// A member or counted socket to take out of Redis.
    private struct Removal: Hashable {
        /// The room of a presence member; nil for a socket count.
        var room: RoomID?
        var user: UserID
        var socket: String
    }

    /// - Parameters:
    ///   - interval: how often members are refreshed (a third of their backstop).
    ///   - gaps: where a user's events are held and read back while the user's socket count is put back.
    init(store: PresenceStore, sockets: UserSocketStore, index: NodeIndex, gaps: any UserEventGaps, interval: Duration, logger: Logger) {
        self.gaps = gaps
        self.store = store
        self.sockets = sockets
        self.index = index
        self.interval = interval
        self.logger = logger
    }

    /// A socket authenticated as `user`: it counts against the user's sockets from now on.
    /// - Returns: the user and the offset of their newest event (the socket gets the ones after
    ///   it); nil, counting nothing, when the user does not exist.
    /// - Throws: `limit_exceeded` when the user has `limit` sockets connected already.
    /// - Throws: `unavailable` also when the user could not be written to this node's index:
    ///   a socket counted where no reaper would find it must not stay counted (it is taken out).
    func open(_ socket: String, of user: UserID, limit: Int) async throws(RoomcastError) -> UserSocketStore.OpenedSocket? {
        // Counted as opening meanwhile, so that the index pruning keeps its user.
        let indexing = state.withLock { state in
            state.opening[user, default: 0] += 1
            return indexWrite(&state, user: user)
        }
        // The index entry goes out beside the count, not before it: a CONNECT stays one round trip.
        let opened: UserSocketStore.OpenedSocket?
        do throws(RoomcastError) {
            opened = try await sockets.openConnected(socket, of: user, limit: limit)
        } catch {
            finishOpening(socket, of: user, counted: false)
            throw error
        }
        if let indexing, !(await indexing.value) {
            finishOpening(socket, of: user, counted: false)
            if opened != nil { await remove(Removal(room: nil, user: user, socket: socket)) }
            throw Self.indexUnavailable
        }
        finishOpening(socket, of: user, counted: opened != nil)
        if opened != nil { socketCount.add(1, ordering: .relaxed) }
        return opened
    }

    /// A join or socket whose index entry could not be written: answered unavailable, as the
    /// write it depends on failed.
    private static let indexUnavailable = RoomcastError(.unavailable, "storage is unavailable, retry later")

    /// The CONNECT's script answered: the socket is held from now when Redis counted it.
    private func finishOpening(_ socket: String, of user: UserID, counted: Bool) {
        state.withLock { state in
            state.opening[user, default: 1] -= 1
            if state.opening[user] == 0 { state.opening[user] = nil }
            if counted { state.connected[user, default: []].insert(socket) }
        }
    }

    /// The write of `room`'s index entry that a join must wait for: one under way, or the next
    /// one when the room is not in the index yet; nil when it is there.
    private func indexWrite(_ state: inout State, room: RoomID) -> Task<Bool, Never>? {
        if let pending = state.roomIndexWrites[room] { return pending }
        guard state.indexedRooms.insert(room).inserted else { return nil }
        let write = nextIndexWrite(&state)
        state.nextIndexWrite?.rooms.append(room)
        state.roomIndexWrites[room] = write
        return write
    }

    /// ``indexWrite(_:room:)`` for a user's socket count.
    private func indexWrite(_ state: inout State, user: UserID) -> Task<Bool, Never>? {
        if let pending = state.userIndexWrites[user] { return pending }
        guard state.indexedUsers.insert(user).inserted else { return nil }
        let write = nextIndexWrite(&state)
        state.nextIndexWrite?.users.append(user)
        state.userIndexWrites[user] = write
        return write
    }

    /// The write that has not taken its entries yet, started if there is none.
    private func nextIndexWrite(_ state: inout State) -> Task<Bool, Never> {
        if let next = state.nextIndexWrite { return next.task }
        let task = Task {
            let (rooms, users) = self.state.withLock { state in
                defer { state.nextIndexWrite = nil }
                return (state.nextIndexWrite?.rooms ?? [], state.nextIndexWrite?.users ?? [])
            }
            return await self.writeIndex(rooms: rooms, users: users)
        }
        state.nextIndexWrite = ([], [], task)
        return task
    }

    /// Adds a room or user to the index. A failure is logged and leaves it out of the index here
    /// too, so the next join or socket writes it again; the joins and sockets waiting for this
    /// write are refused and taken out of Redis, as no reaper would find them if this node died.
    private func writeIndex(rooms: [RoomID], users: [UserID]) async -> Bool {
        var written = true
        do {
            try await index.add(rooms: rooms, users: users)
        } catch {
            logger.warning("node index write failed", metadata: ["error": "\(error)"])
            written = false
        }
        state.withLock { state in
            for room in rooms { state.roomIndexWrites[room] = nil }
            for user in users { state.userIndexWrites[user] = nil }
            if !written {
                state.indexedRooms.subtract(rooms)
                state.indexedUsers.subtract(users)
            }
        }
        return written
    }

    private func forget(_ socket: String, of user: UserID) {
        state.withLock { state in
            state.connected[user]?.remove(socket)
            if state.connected[user]?.isEmpty == true { state.connected[user] = nil }
        }
    }

    /// Sockets connected to this node now (opened and not closed), for the node registry.
    var connectedSockets: Int { socketCount.load(ordering: .relaxed) }

    /// A counted socket closed.
    func close(_ socket: String, of user: UserID) async {
        socketCount.subtract(1, ordering: .relaxed)
        forget(socket, of: user)
        await remove(Removal(room: nil, user: user, socket: socket))
    }

    /// `room` as this node holds it already, if one of its sockets is present there: a socket
    /// keeps that one, not its own copy of the id (memory per joined socket).
    func sharedID(of room: RoomID) -> RoomID {
        state.withLock { state in state.members.index(forKey: room).map { state.members.keys[$0] } ?? room }
    }

    /// A socket opened a room: present from now, unseen counts reset, after reading what it
    /// catches up with.
    /// - Throws: `not_found` or `forbidden` when Redis refused the join, which then changed
    ///   nothing there (the caller forgets the member: ``forgetMember(of:user:socket:)``);
    ///   `unavailable` also when the room could not be written to this node's index: the caller
    ///   leaves the room again (``leave(_:user:socket:)``), as a member no reaper would find if
    ///   this node died must not stay.
    func join(_ room: RoomID, user: UserID, socket: String, catchingUp catchUp: PresenceStore.CatchUp) async throws(RoomcastError) -> PresenceStore.Joined {
        let member = Member(user: user, socket: socket)
        let indexing = state.withLock { state in
            state.members[room, default: []].insert(member)
            // A leave of the same socket that failed earlier must not undo this join.
            state.failed.remove(Removal(room: room, user: user, socket: socket))
            return indexWrite(&state, room: room)
        }
        // Beside the join, not before it: a join stays one round trip.
        let joined = try await store.join(room, user: user, socket: socket, catchingUp: catchUp)
        if let indexing, !(await indexing.value) { throw Self.indexUnavailable }
        return joined
    }

    /// A socket left a room or disconnected.
    func leave(_ room: RoomID, user: UserID, socket: String) async {
        forgetMember(of: room, user: user, socket: socket)
        await remove(Removal(room: room, user: user, socket: socket))
    }

    /// A member that is not in Redis (its join was refused there) is no longer held.
    func forgetMember(of room: RoomID, user: UserID, socket: String) {
        let member = Member(user: user, socket: socket)
        state.withLock { state in
            state.members[room]?.remove(member)
            if state.members[room]?.isEmpty == true { state.members[room] = nil }
        }
    }

    /// Takes a member or socket count out of Redis; one that fails is retried after the next
    /// heartbeat, as the member would otherwise stay until its backstop expiry.
    private func remove(_ removal: Removal) async {
        removalsInFlight.add(1, ordering: .relaxed)
        defer { removalsInFlight.subtract(1, ordering: .relaxed) }
        do throws(RoomcastError) {
            if let room = removal.room {
                try await store.leave(room, user: removal.user, socket: removal.socket)
            } else {
                try await sockets.close(removal.socket, of: removal.user)
            }
        } catch {
            logger.debug(
                "presence removal failed, retried after the next heartbeat",
                metadata: ["room": "\(removal.room.map(\.rawValue) ?? "-")", "user": "\(removal.user)", "error": "\(error)"]
            )
            state.withLock { _ = $0.failed.insert(removal) }
        }
    }

    /// Whether nothing this node put in Redis is left there: no member or socket held, no
    /// removal pending or failed. On a graceful shutdown the node's index then goes with it.
    var holdsNothing: Bool {
        let empty = state.withLock { $0.members.isEmpty && $0.connected.isEmpty && $0.opening.isEmpty && $0.failed.isEmpty }
        return empty && removalsInFlight.load(ordering: .relaxed) == 0
    }

    /// Run after each heartbeat of this node: retries failed removals and, when the heartbeat
    /// found the node's lease lapsed (reapers may have taken its members while it was alive),
    /// puts back every member and socket it holds, and its index. It does so again after the
    /// next heartbeat too, in case a reaper's batch taken before this one's was still running.
    ///
    /// The restore runs in a task of its own, one at a time: O(rooms) round trips must not hold
    /// up the next heartbeat, or a big node would let its lease lapse again.
    func afterHeartbeat(lapsed: Bool) async {
        let (retries, restoring) = state.withLock { state in
            if lapsed { state.restoresDue = 2 }
            let retries = state.failed
            state.failed.removeAll()
            let restoring = state.restoresDue > 0 && !state.restoreRunning
            if restoring {
                state.restoresDue -= 1
                state.restoreRunning = true
            }
            return (retries, restoring)
        }
        for removal in retries {
            // A socket that joined again meanwhile stays.
            let held = state.withLock { state in
                removal.room.map { state.members[$0]?.contains(Member(user: removal.user, socket: removal.socket)) == true }
                    ?? (state.connected[removal.user]?.contains(removal.socket) == true)
            }
            if !held { await remove(removal) }
        }
        if restoring {
            logger.notice("node lease lapsed while alive: putting back its presence")
            Task {
                await self.refresh()
                self.state.withLock { $0.restoreRunning = false }
            }
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

    /// Extends every member and socket held for another backstop lifetime, puts back members
    /// Redis lost, and keeps the index current (prunes rooms and users no longer held, adds back
    /// the held ones, extends both sets). A node reaped while alive gets its counts and members
    /// back the same way as any that Redis lost.
    private func refresh() async {
        await refreshIndex()
        let counted = state.withLock { $0.connected }.mapValues { Set($0) }
        do {
            let gone = try await sockets.refresh(counted)
            // Gone from Redis but still held here: counted again. Meanwhile the user's events
            // did not reach this node, so they are held from before the count is back and read
            // back from the user's stream after.
            let held = state.withLock { state -> [UserID: Set<String>] in
                var held: [UserID: Set<String>] = [:]
                for (user, userSockets) in gone {
                    let still = userSockets.intersection(state.connected[user].map { Set($0) } ?? [])
                    if !still.isEmpty { held[user] = still }
                }
                return held
            }
            if !held.isEmpty {
                logger.notice("socket counts restored", metadata: ["users": "\(held.count)"])
                let users = Array(held.keys)
                gaps.holdEvents(of: users)
                do throws(RoomcastError) {
                    try await sockets.restore(held)
                } catch {
                    logger.warning("socket count restore failed", metadata: ["error": "\(error)"])
                }
                await gaps.readBackEvents(of: users)
                // Sockets that closed while their count was put back are taken out again.
                let current = state.withLock { $0.connected }
                for (user, userSockets) in held {
                    for socket in userSockets.subtracting(current[user].map { Set($0) } ?? []) {
                        try await sockets.close(socket, of: user)
                    }
                }
            }
        } catch {
            logger.warning("socket count refresh failed", metadata: ["error": "\(error)"])
        }
        let snapshot = state.withLock { $0.members }
        for (room, roomMembers) in snapshot {
            do {
                let gone = try await store.refresh(room, members: roomMembers.map(\.text))
                guard !gone.isEmpty else { continue }
                // Gone from Redis but still held here (Redis lost or expired them while it was
                // away, or a reaper took them): add them back. Ones that left meanwhile are no
                // longer held.
                let held = state.withLock { Set(gone).intersection(($0.members[room] ?? []).map(\.text)) }
                if !held.isEmpty {
                    logger.notice("presence restored", metadata: ["room": "\(room)", "sockets": "\(held.count)"])
                    try await store.refresh(room, members: Array(held), restoring: true)
                    // One that left while it was put back goes again.
                    let left = state.withLock { held.subtracting(($0.members[room] ?? []).map(\.text)) }
                    for member in left {
                        let parts = member.split(separator: "|", maxSplits: 1)
                        guard parts.count == 2, let user = UserID(String(parts[0])) else { continue }
                        try await store.leave(room, user: user, socket: String(parts[1]))
                    }
                }
            } catch {
                logger.warning("presence refresh failed", metadata: ["room": "\(room)", "error": "\(error)"])
            }
        }
    }

    /// Prunes the index of rooms and users no longer held, then writes back every held one
    /// (a lapsed node's index was popped by reapers) and extends both sets.
    private func refreshIndex() async {
        let stale = state.withLock { state in
            let pendingRooms = Set(state.failed.compactMap(\.room))
            let pendingUsers = Set(state.failed.filter { $0.room == nil }.map(\.user))
            let rooms = state.indexedRooms.subtracting(state.members.keys).subtracting(pendingRooms)
            let users = state.indexedUsers.subtracting(state.connected.keys).subtracting(pendingUsers).subtracting(state.opening.keys)
            state.indexedRooms.subtract(rooms)
            state.indexedUsers.subtract(users)
            // Held ones whose index write failed are written with the rest.
            state.indexedRooms.formUnion(state.members.keys)
            state.indexedUsers.formUnion(state.connected.keys)
            return (rooms: rooms, users: users)
        }
        do {
            try await index.remove(rooms: stale.rooms, users: stale.users)
            // Read after the removal: a room joined again meanwhile is written back here even if
            // its own addition reached Redis before the removal.
            let (rooms, users) = state.withLock { ($0.indexedRooms, $0.indexedUsers) }
            try await index.add(rooms: rooms, users: users)
        } catch {
            logger.warning("node index refresh failed", metadata: ["error": "\(error)"])
        }
    }
}

/// Where a node's per-user events are held and read back while its sockets' counts are put back
/// (``SocketHub``): a user's events reach the nodes of the user's counted sockets only.
protocol UserEventGaps: Sendable {
    /// Holds the users' live events (those whose offset the node follows).
    func holdEvents(of users: [UserID])
    /// Sends the users' sockets the events they missed since the last one forwarded, then the
    /// held ones, and lets live events through again.
    func readBackEvents(of users: [UserID]) async
}
