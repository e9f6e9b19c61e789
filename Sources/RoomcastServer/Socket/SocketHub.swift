import Logging
import Metrics
import NIOCore
import NIOWebSocket
import RedisClient
import RoomcastCore
import ServiceLifecycle
import SocketIOServer
import Synchronization
import WebSocketServer

/// The node's local index of sockets by channel, and its one Redis subscriber: the gateway's
/// adapter of the Socket.IO server (a room of the library is a Redis channel here).
///
/// A room's channel is subscribed when its first local socket is added and unsubscribed when its
/// last one is removed; only those edges reach Redis. A user's events come on the node's own
/// channels (`node-events:{<slot tag>}:<nodeId>`, one per slot on a Redis Cluster, one on a
/// single server), each subscribed when the node's first user routed to it connects and kept:
/// the functions emitting them publish to the nodes holding the user's sockets, so a connect
/// subscribes nothing once its slot's channel is there, and a disconnect never. The sockets of
/// one user are grouped under the user's name (``RedisKeys/userChannel(_:)``) as a room's are
/// under its channel. Published events are
/// forwarded to the sockets as the bytes that arrived: no JSON is decoded here.
///
/// Room and user events alike carry stream offsets: after a pub/sub outage the channels of the
/// lost link (one shard's, on a Redis Cluster) are subscribed again (by the subscriber) and the
/// events missed by the rooms and users of that link are read back from their streams; those on
/// the other shards are not held and not repaired.
final class SocketHub: Service, SocketIOAdapter, UserEventGaps {
    /// A local socket. The user it is connected as (per-recipient events depend on it) is its
    /// context's, read only for the rare event that has a frame per recipient.
    private typealias Member = SocketIOSocket

    private struct Entry {
        /// The first inline: a user's group mostly has one session, and a set of one
        /// allocates its storage (memory per idle socket).
        private(set) var sessions: InlineSet<Member>
        /// Completes when Redis confirmed a room channel's subscription; nil once it did, and
        /// always for a user's group (a future kept per entry, and a node has an entry per
        /// connected user, is memory per idle socket).
        var subscribed: EventLoopFuture<Void>?
        /// A channel's newest offset forwarded here (a room's or a user's stream): older or equal
        /// ones are repeats, and after a pub/sub outage the gap starts right after it.
        var lastOffset: StreamOffset?
        /// While the pub/sub link is down or its gap is being filled: live events held back, to
        /// follow the replayed ones in order.
        var held: [EventEnvelope]?
        /// The sessions by event loop, kept between events while the channel's sessions do not
        /// change: a fan-out then reads no socket's loop and copies no member list. Only for
        /// channels of several sessions (a user's group mostly has one, and this is memory).
        private var groups: [LoopGroup]?

        init(sessions: InlineSet<Member>, subscribed: EventLoopFuture<Void>?) {
            self.sessions = sessions
            self.subscribed = subscribed
        }

        mutating func insert(_ member: Member) {
            if sessions.insert(member) { groups = nil }
        }

        /// Removes a member; false when it was not in the channel.
        mutating func remove(_ member: Member) -> Bool {
            guard sessions.remove(member) != nil else { return false }
            groups = nil
            return true
        }

        /// The sessions a live event goes to now: none while held (it is kept) or for a repeat.
        mutating func admit(_ envelope: EventEnvelope) -> [LoopGroup] {
            if held != nil {
                held?.append(envelope)
                return []
            }
            return advance(past: envelope) ? loopGroups() : []
        }

        /// The sessions by event loop, made once while the sessions stay the same.
        mutating func loopGroups() -> [LoopGroup] {
            if let groups { return groups }
            let made = LoopGroup.grouping(sessions)
            if sessions.count > 1 { groups = made }
            return made
        }

        /// Moves a channel's last offset to the envelope's; false for a repeat.
        mutating func advance(past envelope: EventEnvelope) -> Bool {
            guard let offset = envelope.offset.flatMap(StreamOffset.init) else { return true }
            if let last = lastOffset, offset <= last { return false }
            lastOffset = offset
            return true
        }
    }

    /// Some of a channel's sessions, all on one event loop: what one loop's write batch gets.
    private struct LoopGroup {
        let loop: any EventLoop
        var members: [Member]

        /// Members by the event loop of their connection (a node has a few loops: a linear search).
        static func grouping(_ members: some Sequence<Member>) -> [LoopGroup] {
            var groups: [LoopGroup] = []
            for member in members {
                let loop = member.eventLoop
                if let index = groups.firstIndex(where: { $0.loop === loop }) {
                    groups[index].members.append(member)
                } else {
                    groups.append(LoopGroup(loop: loop, members: [member]))
                }
            }
            return groups
        }
    }

    private let subscriber: RedisSubscriber
    private let index: Index
    private let batcher: LoopWriteBatcher
    /// Where missed events are read back, and for how long it is retried.
    private let gapLogs: GapLogs
    private let gapReadTimeout: Duration
    private let routes: NodeRoutes
    private let logger: Logger
    /// How long Redis may take to confirm a subscription a socket waits for.
    private let subscriptionTimeout: Duration
    /// Where broadcasts of the Socket.IO server itself are published.
    private let publisher: any RedisClientProtocol

    /// Channel → local sessions. A mutex, because sessions on every event loop join and leave
    /// while the subscriber delivers on its own; index changes and the SUBSCRIBE/UNSUBSCRIBE they
    /// trigger happen under it, so Redis sees them in the order the index changed.
    private final class Index: Sendable {
        let entries = Mutex<[String: Entry]>([:])
    }

    /// The node's channels of per-user events (one per slot on a Redis Cluster, one on a single
    /// server): each subscribed when the node's first user routed to it connects, and kept while
    /// the node runs (at most one per slot), so a connect subscribes nothing once its slot's
    /// channel is there. A channel whose link is down is waited for.
    private final class NodeRoutes: Sendable {
        let node: NodeID
        let routing: NodeEventRouting
        private let state = Mutex(State())

        private struct State {
            /// The channels asked for: the subscription's future until Redis confirmed it, nil after.
            var channels: [String: EventLoopFuture<Void>?] = [:]
            /// Channels whose link was lost and is not restored yet.
            var lost: Set<String> = []
            /// Sockets waiting for a lost channel.
            var waiters: [String: [EventLoopPromise<Void>]] = [:]
        }

        init(node: NodeID, routing: NodeEventRouting) {
            self.node = node
            self.routing = routing
        }

        static func isRoute(_ channel: String) -> Bool { channel.hasPrefix("node-events:") }

        /// The node's channel of `user`'s events.
        func channel(of user: UserID) -> String { RedisKeys.nodeEventsRoute(forUser: user, routing: routing) + node.rawValue }

        /// Completes when the channel of `user`'s events is subscribed: at once when it is, after
        /// its `SSUBSCRIBE` for the node's first user routed to it, or when its lost link is back;
        /// fails after `timeout`.
        func confirmation(of user: UserID, on loop: any EventLoop, subscriber: RedisSubscriber, timeout: Duration) -> SocketIOAdapterConfirmation {
            let channel = channel(of: user)
            let deadline = NIODeadline.now() + TimeAmount(timeout)
            let (wait, isNew) = state.withLock { state -> (EventLoopFuture<Void>?, Bool) in
                if let known = state.channels[channel] {
                    if let subscribing = known { return (subscribing, false) }
                    guard state.lost.contains(channel) else { return (nil, false) }
                    let promise = loop.makePromise(of: Void.self)
                    state.waiters[channel, default: []].append(promise)
                    // A promise completed twice keeps its first result: the later success is ignored.
                    loop.scheduleTask(deadline: deadline) {
                        promise.fail(RedisError(.timeout, "the node's channel of the user's events is not subscribed"))
                    }
                    return (promise.futureResult, false)
                }
                let subscribing = subscriber.startSubscribing([channel], deadline: deadline)
                state.channels[channel] = .some(subscribing)
                return (subscribing, true)
            }
            // Outside the lock: a future completed already runs this at once, and takes the lock.
            if isNew, let subscribing = wait {
                subscribing.whenComplete { [self] result in
                    let confirmed = self.state.withLock { state -> Bool in
                        guard case .some(.some(let pending)) = state.channels[channel], pending === subscribing else { return false }
                        switch result {
                        case .success: state.channels[channel] = .some(nil)
                        // Still wanted by the subscriber, which takes it when a link does; the
                        // next user of the slot waits for that.
                        case .failure: state.channels[channel] = nil
                        }
                        return (try? result.get()) != nil
                    }
                    if confirmed { GatewayMetrics.nodeChannels.increment() }
                }
            }
            return wait.map(SocketIOAdapterConfirmation.init) ?? .done
        }

        func lost(_ channels: some Sequence<String>) {
            state.withLock { $0.lost.formUnion(channels) }
        }

        func restored(_ channels: Set<String>) {
            let served = state.withLock { state in
                state.lost.subtract(channels)
                var served: [EventLoopPromise<Void>] = []
                for channel in channels {
                    served += state.waiters.removeValue(forKey: channel) ?? []
                }
                return served
            }
            for promise in served { promise.succeed() }
        }
    }

    /// - Parameters:
    ///   - configuration: how to reach Redis for the subscriber.
    ///   - eventLog: where missed room events are read back after a pub/sub outage.
    ///   - userEventLog: where missed per-user events are read back after a pub/sub outage.
    ///   - gapReadTimeout: how long reading them back is retried before the channel's sockets are
    ///     closed instead.
    ///   - flushDelay: how long a loop's batch of events waits for more before it is written
    ///     (`socket.flush_delay_us`); nil writes it at the loop's next turn.
    ///   - publisher: where broadcasts of the Socket.IO server itself are published.
    ///   - subscriptionTimeout: how long Redis may take to confirm a subscription a socket waits for.
    init(
        node: NodeID, redis configuration: RedisConfiguration, eventLog: RoomEventLog, userEventLog: UserEventLog, gapReadTimeout: Duration,
        flushDelay: Duration? = nil, publisher: any RedisClientProtocol, subscriptionTimeout: Duration, logger: Logger
    ) {
        let index = Index()
        let routes = NodeRoutes(node: node, routing: NodeEventRouting(isCluster: configuration.isCluster))
        let batcher = LoopWriteBatcher(flushDelay: flushDelay.map(TimeAmount.init))
        let logs = GapLogs(rooms: eventLog, users: userEventLog)
        self.batcher = batcher
        self.gapLogs = logs
        self.gapReadTimeout = gapReadTimeout
        var configuration = configuration
        configuration.clientName = "roomcast-subscriber"
        self.index = index
        self.routes = routes
        self.logger = logger
        self.publisher = publisher
        self.subscriptionTimeout = subscriptionTimeout
        self.subscriber = RedisSubscriber(configuration: configuration, logger: logger) { event in
            switch event {
            case .message(let message):
                Self.deliver(message, from: index, through: batcher, logger: logger)
            case .connectionLost(let error, let channels):
                logger.warning(
                    "pub/sub connection lost; the events of its channels are held until the gap is filled",
                    metadata: ["error": "\(error)", "channels": "\(channels.count)"]
                )
                let lostRoutes = channels.filter(NodeRoutes.isRoute)
                routes.lost(lostRoutes)
                GatewayMetrics.nodeChannels.decrement(by: Double(lostRoutes.count))
                Self.hold(Self.groups(of: channels, in: index, routes: routes), in: index)
            case .restored(let channels):
                logger.info("pub/sub connection restored; filling the gap", metadata: ["channels": "\(channels.count)"])
                let restoredRoutes = Set(channels.filter(NodeRoutes.isRoute))
                routes.restored(restoredRoutes)
                GatewayMetrics.nodeChannels.increment(by: Double(restoredRoutes.count))
                let groups = Self.groups(of: channels, in: index, routes: routes)
                Task { await Self.repair(groups, in: index, from: logs, through: batcher, patience: gapReadTimeout, logger: logger) }
            }
        }
    }

    func run() async throws {
        await subscriber.run()
    }

    /// The names the index groups sockets under for `channels` of a pub/sub link: a room's
    /// channel as it is; for the node's channels of per-user events, every local user whose
    /// events come on one of them.
    private static func groups(of channels: [String], in index: Index, routes: NodeRoutes) -> [String] {
        let routed = Set(channels.filter(NodeRoutes.isRoute))
        var groups = channels.filter { !NodeRoutes.isRoute($0) }
        guard !routed.isEmpty else { return groups }
        let users = index.entries.withLock { Array($0.keys) }.compactMap { name in RedisKeys.user(ofChannel: name).map { (name, $0) } }
        for (name, user) in users where routed.contains(routes.channel(of: user)) {
            groups.append(name)
        }
        return groups
    }

    // MARK: Adapter

    /// Adds a socket to a channel; confirmed once the node is subscribed to it. Where a gap in its
    /// events would start is noted once the joiner has read it (``noteJoined(_:upTo:)``).
    func add(_ socket: SocketIOSocket, to channel: String) -> SocketIOAdapterConfirmation {
        if let user = RedisKeys.user(ofChannel: channel) {
            index.entries.withLock { entries in
                if entries[channel] != nil {
                    entries[channel]!.insert(socket)
                } else {
                    entries[channel] = Entry(sessions: [socket], subscribed: nil)
                }
            }
            return routes.confirmation(of: user, on: socket.eventLoop, subscriber: subscriber, timeout: subscriptionTimeout)
        }
        let deadline = NIODeadline.now() + .milliseconds(Int64(subscriptionTimeout.wholeMilliseconds))
        let member = socket
        let (subscribed, isNew) = index.entries.withLock { entries -> (EventLoopFuture<Void>?, Bool) in
            if entries[channel] != nil {
                // In place: a copy of the entry would also copy its held events.
                entries[channel]!.insert(member)
                return (entries[channel]!.subscribed, false)
            }
            let subscribed = subscriber.startSubscribing([channel], deadline: deadline)
            entries[channel] = Entry(sessions: [member], subscribed: subscribed)
            GatewayMetrics.roomChannels.increment()
            return (subscribed, true)
        }
        guard let subscribed else { return .done }
        if isNew {
            // Outside the lock: a completed future may run this at once. The entry may have gone
            // and come back meanwhile with a subscription of its own, which stays.
            subscribed.whenSuccess { [index] in
                index.entries.withLock { entries in
                    if entries[channel]?.subscribed === subscribed { entries[channel]?.subscribed = nil }
                }
            }
        }
        return SocketIOAdapterConfirmation(subscribed)
    }

    /// Removes a socket from a channel; the last one out of a room's unsubscribes the node.
    func remove(_ socket: SocketIOSocket, from channel: String) {
        index.entries.withLock { entries in
            guard entries[channel]?.remove(socket) == true else { return }
            if entries[channel]!.sessions.isEmpty {
                entries[channel] = nil
                guard RedisKeys.user(ofChannel: channel) == nil else { return }
                _ = subscriber.startUnsubscribing([channel], deadline: .now() + .seconds(5))
                GatewayMetrics.roomChannels.decrement()
            }
        }
    }

    /// Publishes a broadcast of the Socket.IO server to each of its channels, for every node's
    /// sockets in them. Exclusions and broadcasts to the whole namespace have no Redis form here
    /// (the gateway's own events are published by its scripts): they are refused in the log.
    func broadcast(_ broadcast: SocketIOBroadcast) {
        guard broadcast.exceptRooms.isEmpty, broadcast.exceptSockets.isEmpty, !broadcast.rooms.isEmpty, broadcast.frames.count == 1 else {
            logger.error("a broadcast with exclusions, binary attachments or no room cannot be published through Redis: dropped")
            return
        }
        let payload = EventEnvelope.payload(frame: broadcast.frames[0].packet)
        let publisher = self.publisher
        let logger = self.logger
        for channel in broadcast.rooms {
            Task {
                do {
                    _ = try await publisher.send(RedisCommand("SPUBLISH", channel, payload))
                } catch {
                    logger.warning("could not publish a broadcast", metadata: ["channel": "\(channel)", "error": "\(error)"])
                }
            }
        }
    }

    /// The channel's name as the index keeps it (the same storage, so a socket that keeps it
    /// keeps no copy of its own), or `channel` when no socket is in it.
    func sharedName(_ channel: String) -> String {
        index.entries.withLock { entries in entries.index(forKey: channel).map { entries[$0].key } ?? channel }
    }

    /// Records that a joining session got the room's events up to `offset` (its snapshot or
    /// replay), when the node has forwarded none yet: a later gap starts there.
    func noteJoined(_ channel: String, upTo offset: StreamOffset) {
        index.entries.withLock { entries in
            guard var entry = entries[channel], entry.lastOffset == nil else { return }
            entry.lastOffset = offset
            entries[channel] = entry
        }
    }

    // MARK: Gaps of per-user events

    func holdEvents(of users: [UserID]) {
        Self.hold(users.map(RedisKeys.userChannel), in: index)
    }

    func readBackEvents(of users: [UserID]) async {
        await Self.repair(users.map(RedisKeys.userChannel), in: index, from: gapLogs, through: batcher, patience: gapReadTimeout, logger: logger)
    }

    /// The number of local sessions in a channel (for tests and metrics).
    func sessionCount(in channel: String) -> Int {
        index.entries.withLock { $0[channel]?.sessions.count ?? 0 }
    }

    private static func deliver(_ message: RedisPubSubMessage, from index: Index, through batcher: LoopWriteBatcher, logger: Logger) {
        // The fan-out latency starts here: the subscriber has just read the message.
        let start = NIODeadline.now()
        var message = message
        if NodeRoutes.isRoute(message.channel) {
            // `<userId> <offset> <frame>`: the user's events, for the sockets grouped under its name.
            let bytes = message.payload.readableBytesView
            guard let space = bytes.firstIndex(of: UInt8(ascii: " ")), let user = UserID(String(decoding: bytes[..<space], as: UTF8.self)) else {
                logger.error("dropped a malformed pub/sub payload", metadata: ["channel": "\(message.channel)"])
                return
            }
            message.channel = RedisKeys.userChannel(user)
            message.payload.moveReaderIndex(forwardBy: space - bytes.startIndex + 1)
        }
        guard let envelope = EventEnvelope(payload: message.payload) else {
            logger.error("dropped a malformed pub/sub payload", metadata: ["channel": "\(message.channel)"])
            return
        }
        if let sender = envelope.volatileSender {
            // A preview: to every local socket but its sender's, never held back (a late one is
            // worthless; the next comes soon) and dropped while the link is being repaired.
            let sessions = index.entries.withLock { entries -> [Member] in
                guard let entry = entries[message.channel], entry.held == nil else { return [] }
                return entry.sessions.filter { $0.sessionID != sender }
            }
            forward(envelope, to: LoopGroup.grouping(sessions), channel: message.channel, through: batcher, readAt: start)
            return
        }
        // One in-place access to the entry (a copy would also copy its held events).
        let groups = index.entries.withLock { $0[message.channel]?.admit(envelope) } ?? []
        forward(envelope, to: groups, channel: message.channel, through: batcher, readAt: start)
    }


    /// Sends an event's bytes to sessions, each getting its frame (per-recipient events).
    ///
    /// Each event loop gets the event in its next write batch (``LoopWriteBatcher``), which writes
    /// it to its sessions and flushes each once per batch. The frame is encoded once per loop, on
    /// that loop: the loops then never touch one buffer's reference count at the same time.
    /// - Parameter readAt: when the subscriber read a live event (for the fan-out latency); nil
    ///   for events replayed after a gap.
    private static func forward(
        _ envelope: EventEnvelope, to groups: [LoopGroup], channel: String, through batcher: LoopWriteBatcher, readAt: NIODeadline? = nil
    ) {
        guard !groups.isEmpty else { return }
        let isShared = envelope.listedFrame == nil
        // Parsed once for every recipient: a session compares it only while it joins the channel.
        let offset = envelope.offset.flatMap(StreamOffset.init)?.position
        let isVolatile = envelope.volatileSender != nil
        for group in groups {
            GatewayMetrics.framesDelivered.increment(by: Int64(group.members.count))
            batcher.post(on: group.loop) {
                let shared = isShared ? OutboundFrame(packet: envelope.frame) : nil
                var written: [NIOLoopBound<WebSocketConnectionHandler>] = []
                written.reserveCapacity(group.members.count)
                for member in group.members {
                    let frame = shared ?? OutboundFrame(packet: envelope.frame(for: member.context(as: SocketState.self)?.user.id.rawValue ?? ""))
                    let connection = isVolatile ? member.deliverVolatile(frame, to: channel) : member.deliver(frame, to: channel, position: offset)
                    if let connection { written.append(connection) }
                }
                if let readAt { GatewayMetrics.fanoutWritten(since: readAt) }
                return written
            }
        }
    }

    /// A pub/sub link is down: hold the events of its channels that have an offset (rooms,
    /// users) from now on (none arrive until it is back).
    private static func hold(_ channels: [String], in index: Index) {
        index.entries.withLock { entries in
            for channel in channels {
                guard let entry = entries[channel], entry.held == nil, entry.lastOffset != nil else { continue }
                entries[channel]?.held = []
            }
        }
    }

    /// The events of `channel` (a room's or a user's) after `last`, read again with backoff
    /// while Redis refuses (a restarted Redis Cluster takes subscriptions seconds before it serves
    /// reads: `CLUSTERDOWN`); `nil` once `patience` has passed, or at once when the stream no
    /// longer holds them all (trimmed while the link was down). The channel's live events stay
    /// held meanwhile.
    private static func missedEvents(
        of channel: String, after last: StreamOffset, from logs: GapLogs, patience: Duration, logger: Logger
    ) async -> [EventEnvelope]? {
        let deadline = ContinuousClock.now + patience
        let backoff = Backoff(initial: .milliseconds(50), maximum: .seconds(1))
        var attempt = 0
        while true {
            do {
                guard let events = try await logs.events(of: channel, after: last) else {
                    logger.warning("the events missed in a channel are no longer all kept", metadata: ["channel": "\(channel)"])
                    return nil
                }
                return events
            } catch {
                attempt += 1
                let delay = backoff.delay(attempt: attempt)
                guard ContinuousClock.now + delay < deadline else {
                    logger.warning("could not read the events missed in a channel", metadata: ["channel": "\(channel)", "error": "\(error)"])
                    return nil
                }
                logger.debug("reading the events missed in a channel again", metadata: ["channel": "\(channel)", "error": "\(error)"])
                try? await Task.sleep(for: delay)
            }
        }
    }

    /// The link of `channels` is back: sends each of them held (room or user) the events it
    /// missed (read from its stream after the last offset forwarded), then the events held
    /// meanwhile, skipping repeats, and lets live events through again. Clients see no gap and
    /// no repeat. Channels of other links are not touched.
    private static func repair(
        _ channels: [String], in index: Index, from logs: GapLogs, through batcher: LoopWriteBatcher, patience: Duration, logger: Logger
    ) async {
        let gaps = index.entries.withLock { entries in
            channels.compactMap { channel -> (String, StreamOffset)? in
                guard let entry = entries[channel], entry.held != nil, let last = entry.lastOffset else { return nil }
                return (channel, last)
            }
        }
        for (channel, last) in gaps {
            guard let missed = await missedEvents(of: channel, after: last, from: logs, patience: patience, logger: logger) else {
                // The gap cannot be read back: the channel's sockets are closed instead of left
                // with a hole, and their clients reconnect and recover by offset themselves.
                let sessions = index.entries.withLock { entries in
                    entries[channel]?.held = nil
                    return entries[channel].map { Array($0.sessions) } ?? []
                }
                logger.error("closing a channel's sockets: the events they missed could not be read", metadata: ["channel": "\(channel)"])
                GatewayMetrics.gapsClosed.increment()
                for member in sessions {
                    member.closeConnection(.goingAway, reason: "missed events; reconnect to recover")
                }
                continue
            }
            GatewayMetrics.gapRepairs.increment()
            // Under the lock, so no live event can slip between the replay and the held ones.
            index.entries.withLock { entries in
                guard var entry = entries[channel] else { return }
                let held = entry.held ?? []
                entry.held = nil
                var ready: [EventEnvelope] = []
                for envelope in missed + held where entry.advance(past: envelope) {
                    ready.append(envelope)
                }
                let groups = entry.loopGroups()
                entries[channel] = entry
                for envelope in ready {
                    forward(envelope, to: groups, channel: channel, through: batcher)
                }
            }
            if !missed.isEmpty {
                logger.notice("filled a pub/sub gap", metadata: ["channel": "\(channel)", "events": "\(missed.count)"])
            }
        }
        // Channels subscribed while the link was down have nothing to fill.
        index.entries.withLock { entries in
            for channel in channels {
                guard let entry = entries[channel], entry.held != nil else { continue }
                entries[channel]?.held = nil
                let groups = LoopGroup.grouping(entry.sessions)
                for envelope in entry.held ?? [] {
                    forward(envelope, to: groups, channel: channel, through: batcher)
                }
            }
        }
    }
}
