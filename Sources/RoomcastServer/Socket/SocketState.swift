import Foundation
import Logging
import NIOCore
import RoomcastCore
import SocketIO
import SocketIOServer
import Synchronization

/// One connection's Socket.IO state: who it is and which rooms it joined.
///
/// Used only by the connection's packet task, which handles one packet at a time, and of which
/// one runs at a time: `SocketConnection`'s inbox starts the next task only after the last one
/// found it empty, under its lock, so each task sees everything the one before it did. That
/// hand-over is why it may cross tasks without a lock of its own.
final class SocketState: @unchecked Sendable {
    let session: SocketSession
    let services: SocketServices
    /// The authenticated user once CONNECT succeeded.
    private(set) var user: User?
    /// The upgrade request's credential (`Authorization` header or `token` query), used when a
    /// CONNECT packet carries none.
    private var upgradeCredential: UpgradeCredential
    private(set) var rooms: InlineSet<RoomID> = []
    /// The socket's event budget.
    private var eventBudget: TokenBucket
    /// Made on the socket's first canvas preview: most sockets never send one, and what they
    /// would hold counts in the memory per idle socket.
    private var previewState: SocketPreviews?

    init(session: SocketSession, services: SocketServices, upgradeToken: String?) {
        self.session = session
        self.services = services
        self.upgradeCredential = upgradeToken.map(UpgradeCredential.token) ?? .none
        self.eventBudget = TokenBucket(rate: Double(services.settings.eventsPerSecond), burst: services.settings.eventBurst, now: .now)
    }

    /// The node's socket logger with this socket's `socket` and, once connected, `user`: made
    /// when a line is logged, as a logger kept per connection would be memory per idle socket.
    var logger: Logger {
        var logger = services.logger
        logger[metadataKey: "socket"] = .string(session.id)
        if let user { logger[metadataKey: "user"] = .string(user.id.rawValue) }
        return logger
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
        let user = connectedUser.id
        let previews = self.previews
        switch previews.offer(preview) {
        case .sendNow:
            try await services.previews.publish(preview, from: user, socket: session.id)
        case .sendAt(let due):
            let key = preview.key
            Task {
                try? await Task.sleep(until: due)
                guard let latest = previews.takeDue(key) else { return }
                try? await self.services.previews.publish(latest, from: user, socket: self.session.id)
            }
        case .replaced, .dropped:
            break
        }
    }

    /// The socket's preview budget and throttle, made on first use.
    private var previews: SocketPreviews {
        if let previewState { return previewState }
        let made = SocketPreviews(rate: services.settings.previewRate)
        previewState = made
        return made
    }

    /// The connected user; event handlers only run after CONNECT.
    var connectedUser: User {
        guard let user else { preconditionFailure("socket events are only handled after CONNECT") }
        return user
    }

    /// Connects the socket as `user`: counts it, reads the user, subscribes the node to the
    /// user's channel, and sends `connectFrame` before any of the user's events.
    ///
    /// The count-and-read script and the SUBSCRIBE (when this node holds none of the user's
    /// sockets yet) go out together, so a CONNECT waits for one Redis round trip. The user's
    /// events arriving meanwhile are held and pass after the frame.
    /// - Throws: `unauthorized` when the user does not exist; `limit_exceeded` when the user has
    ///   `socket.max_per_user` sockets already; `unavailable` when Redis cannot be reached.
    func connect(as user: UserID, sending connectFrame: ByteBuffer) async throws(RoomcastError) {
        let channel = RedisKeys.userChannel(user)
        session.beginJoin(channel)
        let subscribed = services.hub.add(session, as: user, to: channel, deadline: subscriptionDeadline)
        let opened: UserSocketStore.OpenedSocket
        do throws(RoomcastError) {
            guard let found = try await services.presence.open(session.id, of: user, limit: services.settings.maxSocketsPerUser) else {
                throw RoomcastError(.unauthorized, "the token's user does not exist")
            }
            opened = found
        } catch {
            abandon(channel)
            throw error
        }
        do {
            try await subscribed.get()
        } catch {
            abandon(channel)
            await services.presence.close(session.id, of: user)
            throw Self.subscriptionRefused
        }
        // A gap in the user's events (a pub/sub outage) is read back from here.
        services.hub.noteJoined(channel, upTo: opened.offset)
        // The same id, as the token's string, which the hub and presence hold already: the
        // record's own copy would be a second string per socket.
        var connected = opened.user
        connected.id = user
        self.user = connected
        settleUpgradeCredential()
        session.countConnected()
        // Every held event follows the frame: one no newer than the offset was published just
        // before this socket counted, and is harmless to send (no snapshot holds it). Without an
        // offset no floor is kept, which would be memory per idle socket until its next event.
        session.completeJoin(channel, sending: [connectFrame], upTo: nil)
    }

    /// Undoes a failed connect's subscription: the events held for it are dropped, as the
    /// socket never got its CONNECT.
    private func abandon(_ channel: String) {
        services.hub.remove(session, from: channel)
        session.abandonJoin(channel)
    }

    /// Joins a room after checking membership in Redis. With `since` (the last offset the client
    /// saw), the events it missed are replayed if the room still keeps them all; otherwise, or
    /// without `since`, it gets `elements:batch`.
    /// - Returns: whether the client recovered by replay.
    func join(_ room: RoomID, since: String?) async throws(RoomcastError) -> Bool {
        let room = services.presence.sharedID(of: room)
        switch try await services.rooms.membership(of: connectedUser.id, in: room) {
        case .noSuchRoom: throw RoomcastError(.notFound, "room not found")
        case .notParticipant: throw RoomcastError(.forbidden, "not a participant of this room")
        case .participant: break
        }
        let channel = RedisKeys.roomChannel(room)
        guard rooms.contains(room) || rooms.count < services.settings.maxRooms else {
            throw RoomcastError(.limitExceeded, "a socket can be in at most \(services.settings.maxRooms) rooms at once: leave one first")
        }
        guard !rooms.contains(room) else {
            // Joined already: a fresh batch, with the room's events held while it is read, as on
            // a first join; otherwise an event could come just before the batch that holds it
            // (twice) or just before a batch that lacks it (lost).
            session.beginJoin(channel)
            do {
                return try await catchUp(room, since: since, channel: channel)
            } catch {
                session.completeJoin(channel, sending: [], upTo: nil)
                throw error
            }
        }
        session.beginJoin(channel)
        do {
            try await subscribe(to: channel, as: connectedUser.id)
        } catch {
            session.completeJoin(channel, sending: [], upTo: nil)
            throw error
        }
        rooms.insert(room)
        let recovered: Bool
        do {
            recovered = try await catchUp(room, since: since, channel: channel)
            // After the snapshot, so the joiner gets its own `room:presence` as a live event.
            let presence = try await services.presence.join(room, user: connectedUser.id, socket: session.id)
            if let frame = presence.joinerFrame {
                // Nobody's presence changed (another device of a present user joined): this
                // socket alone learns who is there, at the room's current offset.
                session.send(frame)
            }
        } catch {
            // Joined without a snapshot would leave the client's canvas wrong: undo the join.
            session.completeJoin(channel, sending: [], upTo: nil)
            await leave(room)
            throw error
        }
        // The user's other devices learn that the room was opened (its unseen counts are 0 now).
        // The join is done: its ack must not fail for want of this (#29 item 5).
        await services.userEvents.publishCommitted(.roomSeen, RoomSeen(roomId: room, unseenCount: 0), to: [connectedUser.id])
        logger.debug("room joined", metadata: ["room": .string(room.rawValue), "recovered": .stringConvertible(recovered)])
        return recovered
    }

    /// Sends the events missed since `since` when the room still has them all, else
    /// `elements:batch {roomId, elements, offset}`; then releases the events held back while
    /// joining `channel`.
    /// - Returns: whether it replayed.
    private func catchUp(_ room: RoomID, since: String?, channel: String) async throws(RoomcastError) -> Bool {
        if let since, let replay = try await services.eventLog.replay(room, after: since, for: connectedUser.id) {
            session.completeJoin(channel, sending: replay.frames, upTo: StreamOffset(replay.offset)?.position)
            if let offset = StreamOffset(replay.offset) { services.hub.noteJoined(channel, upTo: offset) }
            return true
        }
        let snapshot = try await services.elements.snapshot(of: room, for: connectedUser.id)
        var payload = ByteBuffer(string: "{\"roomId\":\"\(room)\",\"elements\":")
        payload.writeImmutableBuffer(snapshot.json)
        payload.writeString(",\"offset\":\"\(snapshot.offset)\"}")
        session.completeJoin(channel, sending: [SocketIOFrame.event(name: ServerEvent.elementsBatch.rawValue, payload: payload)], upTo: StreamOffset(snapshot.offset)?.position)
        if let offset = StreamOffset(snapshot.offset) { services.hub.noteJoined(channel, upTo: offset) }
        return false
    }

    /// Leaves a room (nothing happens if the socket was not in it).
    /// Awaits the presence update, so a `room:join` right after a `room:leave` of the same
    /// socket cannot have its presence removed by the leave arriving late.
    func leave(_ room: RoomID) async {
        guard let user, stopReceiving(room) else { return }
        logger.debug("room left", metadata: ["room": .string(room.rawValue)])
        await services.presence.leave(room, user: user.id, socket: session.id)
    }

    /// Stops delivering `room`'s events to this socket; false when it was not in the room.
    private func stopReceiving(_ room: RoomID) -> Bool {
        guard rooms.remove(room) != nil else { return false }
        services.hub.remove(session, from: RedisKeys.roomChannel(room))
        return true
    }

    /// What the upgrade request's token is worth. Its bytes are kept only until a CONNECT
    /// succeeds (memory per idle socket); what is kept then is its verified user and expiry,
    /// because a client may CONNECT again on the same connection with no payload:
    /// Socket.IO-Client-Swift's `disconnect()` then `connect()` sends `41` then `40`, its token
    /// still in the connection's query or headers.
    private enum UpgradeCredential {
        case none
        case token(String)
        case verified(TokenService.Verified)
    }

    /// The upgrade request's credential, verified, for a CONNECT that carries no token; nil
    /// when the upgrade request had none.
    /// - Throws: `token_expired` once its expiry has passed, `unauthorized` for a bad token.
    func upgradeIdentity(now: Date = .now) throws(RoomcastError) -> TokenService.Verified? {
        switch upgradeCredential {
        case .none:
            return nil
        case .token(let token):
            // A refusal is not kept: the token stays until it is used or the socket is gone.
            let verified = try services.tokens.verifyToken(token, now: now)
            upgradeCredential = .verified(verified)
            return verified
        case .verified(let verified):
            guard now < verified.expires else { throw RoomcastError(.tokenExpired, "token expired") }
            return verified
        }
    }

    /// Once connected, the token's bytes go; its identity stays if it is a good one.
    private func settleUpgradeCredential() {
        guard case .token(let token) = upgradeCredential else { return }
        upgradeCredential = (try? services.tokens.verifyToken(token)).map(UpgradeCredential.verified) ?? .none
    }

    /// Leaves every room and the user channel (the socket disconnected).
    ///
    /// Awaited by the connection's packet task (no task of its own): the rooms' presence and the
    /// socket count are released together, so a disconnect waits for one Redis round trip. A
    /// lost call only lets the members expire.
    func disconnect() async {
        guard let user else { return }
        logger.info("socket disconnected", metadata: ["rooms": .stringConvertible(rooms.count)])
        session.countDisconnected()
        let presence = services.presence
        let socket = session.id
        let left = rooms
        for room in left { _ = stopReceiving(room) }
        services.hub.remove(session, from: RedisKeys.userChannel(user.id))
        self.user = nil
        guard !left.isEmpty else {
            return await presence.close(socket, of: user.id)
        }
        await withTaskGroup(of: Void.self) { group in
            for room in left {
                group.addTask { await presence.leave(room, user: user.id, socket: socket) }
            }
            group.addTask { await presence.close(socket, of: user.id) }
        }
    }

    private struct RoomSeen: Encodable, Sendable {
        var roomId: RoomID
        var unseenCount: Int
    }

    private func subscribe(to channel: String, as user: UserID) async throws(RoomcastError) {
        do {
            try await services.hub.add(session, as: user, to: channel, deadline: subscriptionDeadline).get()
        } catch {
            services.hub.remove(session, from: channel)
            throw Self.subscriptionRefused
        }
    }

    /// When a subscription asked for now must be confirmed by Redis.
    private var subscriptionDeadline: NIODeadline {
        NIODeadline.now() + .milliseconds(Int64(services.redisTimeout.wholeMilliseconds))
    }

    private static let subscriptionRefused = RoomcastError(.unavailable, "cannot subscribe to events right now, retry later")
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
