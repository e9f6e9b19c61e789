import Foundation
import Logging
import NIOCore
import RoomcastCore
import SocketIO
import SocketIOServer
import Synchronization

/// A connected socket's gateway state: who it is and which rooms it joined; the context the
/// library hands the gateway's event handlers with each event.
///
/// Events of different rooms run at once (the namespace orders events per room), so what they
/// share is under a lock; the event budget is spent only as a packet arrives, one packet at a
/// time, on the connection's event loop.
final class SocketState: @unchecked Sendable {
    let socket: SocketIOSocket
    /// The node's services: the socket's own bookkeeping reads them; event handlers get what they
    /// need through ``changes`` and ``tokens``.
    private let services: SocketServices
    /// The authenticated user.
    let user: User
    private let joined = Mutex<JoinedRooms>(JoinedRooms())
    /// The socket's event budget: spent as packets arrive, one at a time.
    private var eventBudget: TokenBucket
    /// Made on the socket's first canvas preview: most sockets never send one, and what they
    /// would hold counts in the memory per idle socket. Set as a packet arrives, once.
    private var previewState: SocketPreviews?

    private init(socket: SocketIOSocket, services: SocketServices, user: User) {
        self.socket = socket
        self.services = services
        self.user = user
        self.eventBudget = TokenBucket(rate: Double(services.settings.eventsPerSecond), burst: services.settings.eventBurst, now: .now)
    }

    /// The node's socket logger with this socket's `socket` and `user`: made when a line is
    /// logged, as a logger kept per connection would be memory per idle socket.
    var logger: Logger {
        services.logger(socket: socket.sessionID, user: user.id)
    }

    /// The rooms joined.
    var rooms: InlineSet<RoomID> { joined.withLock { $0.rooms } }

    /// The rooms a socket is in, and how many it is joining: a join takes its place under
    /// `socket.max_rooms` before it awaits its subscription, so joins of several rooms at once (a
    /// socket's events of different rooms run side by side) cannot together pass the limit.
    private struct JoinedRooms {
        var rooms: InlineSet<RoomID> = []
        var joining = 0
    }

    /// Where a join stands against `socket.max_rooms`.
    private enum JoinPlace {
        /// The socket is in the room already: a fresh catch-up, no new place.
        case member
        /// A place was taken for it (given back if the join fails before it is in).
        case taken
        /// Every place is taken.
        case full
    }

    /// Spends one event of the socket's budget.
    /// - Throws: `rate_limited` when the socket sends faster than `socket.events_per_second`.
    func admitEvent() throws(RoomcastError) {
        guard eventBudget.take(now: .now) else {
            throw RoomcastError(.rateLimited, "too many events: at most \(services.settings.eventsPerSecond) per second; this one was not handled")
        }
    }

    /// Spends one canvas preview of the socket's preview budget.
    /// - Throws: `rate_limited` when the socket sends previews faster than 4 × `canvas.preview_hz`.
    func admitPreview() throws(RoomcastError) {
        let previews = previewState ?? SocketPreviews(rate: services.settings.previewRate)
        previewState = previews
        guard previews.admit() else {
            let rate = 4 * services.settings.previewRate
            throw RoomcastError(.rateLimited, "too many previews: at most \(rate) per second; this one was not sent")
        }
    }

    /// Relays a canvas preview to the room's other sockets, at most `canvas.preview_hz` times a
    /// second per element or cursor: one that comes sooner waits for its turn, replaced by any
    /// newer one meanwhile.
    /// - Throws: `forbidden` unless the socket joined the room (previews are for those watching it).
    func preview(_ preview: CanvasPreview) async throws(RoomcastError) {
        guard rooms.contains(preview.room) else {
            throw RoomcastError(.forbidden, "join the room before sending previews to it")
        }
        // Admitted already (`admitPreview`), so made.
        guard let previews = previewState else { return }
        let user = self.user.id
        let socketID = socket.sessionID
        switch previews.offer(preview) {
        case .sendNow:
            try await services.previews.publish(preview, from: user, socket: socketID)
        case .sendAt(let due):
            let key = preview.key
            let relay = services.previews
            Task {
                try? await Task.sleep(until: due)
                guard let latest = previews.takeDue(key) else { return }
                try? await relay.publish(latest, from: user, socket: socketID)
            }
        case .replaced, .dropped:
            break
        }
    }

    /// The connected user; kept for the event handlers' wording.
    var connectedUser: User { user }

    /// How an event handler changes rooms: each change with its side effects.
    var changes: RoomChanges { services.changes }

    /// Verifies tokens (`auth:refresh`).
    var tokens: TokenService { services.tokens }

    /// Connects `socket` as `user`: counts it and reads the user in one Redis call. The user's
    /// events come on the node's own channel of the user's slot (``SocketHub``; subscribed for
    /// the node's first user there): once the socket counts, the functions emitting them publish
    /// to this node too. Those arriving
    /// meanwhile are held, and pass after the CONNECT answer.
    /// - Throws: `unauthorized` when the user does not exist; `limit_exceeded` when the user has
    ///   `socket.max_per_user` sockets already; `unavailable` when Redis cannot be reached.
    static func connect(_ socket: SocketIOSocket, as user: UserID, services: SocketServices) async throws(RoomcastError) -> SocketState {
        let channel = RedisKeys.userChannel(user)
        let join = socket.beginJoin(channel)
        let opened: UserSocketStore.OpenedSocket
        do throws(RoomcastError) {
            guard let found = try await services.presence.open(socket.sessionID, of: user, limit: services.settings.maxSocketsPerUser) else {
                throw RoomcastError(.unauthorized, "the token's user does not exist")
            }
            opened = found
        } catch {
            join.cancel()
            throw error
        }
        do {
            try await join.confirmed()
        } catch {
            await services.presence.close(socket.sessionID, of: user)
            throw Self.subscriptionRefused
        }
        // A gap in the user's events (a pub/sub outage) is read back from here.
        services.hub.noteJoined(channel, upTo: opened.offset)
        // Every held event follows the CONNECT answer: one no newer than the offset was published
        // just before this socket counted, and is harmless to send (no snapshot holds it).
        join.complete()
        // The same id, as the token's string, which the hub and presence hold already: the
        // record's own copy would be a second string per socket.
        var connected = opened.user
        connected.id = user
        return SocketState(socket: socket, services: services, user: connected)
    }

    /// Joins a room: one Redis call checks membership, reads what the client catches up with and
    /// makes it present. With `since` (the last offset the client saw), the events it missed are
    /// replayed if the room still keeps them all; otherwise, or without `since`, it gets
    /// `elements:batch`. The room's live events are held from before that call until what it
    /// read is sent, so none is lost or sent twice.
    /// - Returns: whether the client recovered by replay.
    func join(_ room: RoomID, since: String?) async throws(RoomcastError) -> Bool {
        let room = services.presence.sharedID(of: room)
        let channel = services.hub.sharedName(RedisKeys.roomChannel(room))
        let maxRooms = services.settings.maxRooms
        let place = joined.withLock { joined -> JoinPlace in
            if joined.rooms.contains(room) { return .member }
            guard joined.rooms.count + joined.joining < maxRooms else { return .full }
            joined.joining += 1
            return .taken
        }
        if place == .full {
            throw RoomcastError(.limitExceeded, "a socket can be in at most \(maxRooms) rooms at once: leave one first")
        }
        // Joined already or not, the room's events are held while what the client catches up
        // with is read; otherwise an event could come just before it (twice) or be missed.
        let join = socket.beginJoin(channel)
        if place == .taken {
            do {
                try await join.confirmed()
            } catch {
                joined.withLock { $0.joining -= 1 }
                throw Self.subscriptionRefused
            }
            joined.withLock { joined in
                joined.joining -= 1
                _ = joined.rooms.insert(room)
            }
        }
        let catchUp: PresenceStore.CatchUp =
            if let since, StreamOffset(since) != nil { .events(after: since, most: services.eventLog.maximumReplay) } else { .snapshot }
        let presence: PresenceStore.Joined
        do {
            presence = try await services.presence.join(room, user: user.id, socket: socket.sessionID, catchingUp: catchUp)
        } catch {
            join.cancel()
            if place == .taken { await undoJoin(room, after: error) }
            throw error
        }
        guard let caughtUp = presence.caughtUp else {
            join.cancel()
            throw RoomcastError(.internalError, "the join read nothing to catch up with")
        }
        var frames: [ByteBuffer]
        let recovered: Bool
        switch caughtUp {
        case .replay(_, let missed):
            (frames, recovered) = (missed, true)
        case .snapshot(let offset, let elements):
            var payload = ByteBuffer(string: "{\"roomId\":\"\(room)\",\"elements\":")
            payload.writeImmutableBuffer(elements)
            payload.writeString(",\"offset\":\"\(offset)\"}")
            (frames, recovered) = ([SocketIOFrame.event(name: ServerEvent.elementsBatch.rawValue, payload: payload)], false)
        }
        // Nobody's presence changed (another device of a present user joined): this socket alone
        // learns who is there, at the offset it is current at.
        if place == .taken, let frame = presence.joinerFrame { frames.append(frame) }
        let offset = StreamOffset(caughtUp.offset)
        join.complete(sending: frames, upTo: offset?.position)
        if let offset { services.hub.noteJoined(channel, upTo: offset) }
        logger.debug("room joined", metadata: ["room": .string(room.rawValue), "recovered": .stringConvertible(recovered)])
        guard place == .taken else { return recovered }
        // The user's devices learn that the room was opened (its unseen counts are 0 now); when
        // it was open on another of them already, nothing changed for the others and this socket
        // alone is told. The join is done: its ack must not fail for want of this.
        if let seen = await services.changes.roomOpened(room, by: user.id, wasOpen: presence.wasOpen) {
            socket.send(seen)
        }
        return recovered
    }

    /// Takes back a first join of `room` whose Redis call failed. Refused (no such room, not a
    /// participant), it changed nothing in Redis; otherwise it may have, and the member is taken
    /// out there too.
    private func undoJoin(_ room: RoomID, after error: RoomcastError) async {
        guard error.code == .notFound || error.code == .forbidden else {
            await leave(room)
            return
        }
        guard joined.withLock({ $0.rooms.remove(room) }) != nil else { return }
        services.presence.forgetMember(of: room, user: user.id, socket: socket.sessionID)
    }

    /// Leaves a room (nothing happens if the socket was not in it).
    /// Awaits the presence update, so a `room:join` right after a `room:leave` of the same
    /// socket cannot have its presence removed by the leave arriving late.
    func leave(_ room: RoomID) async {
        guard joined.withLock({ $0.rooms.remove(room) }) != nil else { return }
        socket.leave(RedisKeys.roomChannel(room))
        logger.debug("room left", metadata: ["room": .string(room.rawValue)])
        await services.presence.leave(room, user: user.id, socket: socket.sessionID)
    }

    /// Releases the rooms' presence and the socket's count (the socket disconnected; the library
    /// left its channels already).
    ///
    /// The rooms' presence and the socket count are released together, so a disconnect waits for
    /// one Redis round trip. A lost call only lets the members expire.
    func disconnect() async {
        let left = joined.withLock { joined in
            defer { joined.rooms = [] }
            return joined.rooms
        }
        logger.info("socket disconnected", metadata: ["rooms": .stringConvertible(left.count)])
        let presence = services.presence
        let socketID = socket.sessionID
        let user = self.user.id
        guard !left.isEmpty else {
            return await presence.close(socketID, of: user)
        }
        await withTaskGroup(of: Void.self) { group in
            for room in left {
                group.addTask { await presence.leave(room, user: user, socket: socketID) }
            }
            group.addTask { await presence.close(socketID, of: user) }
        }
    }

    static let subscriptionRefused = RoomcastError(.unavailable, "cannot subscribe to events right now, retry later")
}

/// A socket's canvas previews: their budget, apart from other events, of 4 × `canvas.preview_hz`
/// a second (a drag and a cursor at twice the preview rate) in bursts of twice that, and the
/// previews sent and waiting per element or cursor. Under a lock: a waiting preview is sent from
/// a timer task, not the packet task.
private final class SocketPreviews: Sendable {
    private struct State {
        var budget: TokenBucket
        var throttle: PreviewThrottle<CanvasPreview>
    }

    private let state: Mutex<State>

    init(rate: Int) {
        state = Mutex(State(
            budget: TokenBucket(rate: Double(4 * rate), burst: 8 * rate, now: .now),
            throttle: PreviewThrottle(interval: .seconds(1) / rate)
        ))
    }

    /// Spends one preview of the budget; false when it is spent.
    func admit() -> Bool {
        state.withLock { $0.budget.take(now: .now) }
    }

    func offer(_ preview: CanvasPreview) -> PreviewThrottle<CanvasPreview>.Decision {
        state.withLock { $0.throttle.offer(preview, key: preview.key, now: .now) }
    }

    func takeDue(_ key: String) -> CanvasPreview? {
        state.withLock { $0.throttle.takeDue(key, now: .now) }
    }
}
