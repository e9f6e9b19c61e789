import Logging
import NIOCore
import RedisClient
import RoomcastCore
import ServiceLifecycle
import Synchronization

/// The node's local index of sockets by channel, and its one Redis subscriber.
///
/// A channel (a room's or a user's) is subscribed when its first local session is added and
/// unsubscribed when its last one is removed; only those edges reach Redis. Published events are
/// forwarded to the channel's sessions as the bytes that arrived: no JSON is decoded here.
final class SocketHub: Service, Sendable {
    /// A local socket and the user it is connected as (per-recipient events depend on it).
    private struct Member {
        var session: SocketSession
        var user: String
    }

    private struct Entry {
        var sessions: [ObjectIdentifier: Member]
        /// Completes when Redis confirmed the subscription.
        var subscribed: EventLoopFuture<Void>
    }

    private let subscriber: RedisSubscriber
    private let index: Index
    private let logger: Logger

    /// Channel → local sessions. A mutex, because sessions on every event loop join and leave
    /// while the subscriber delivers on its own; index changes and the SUBSCRIBE/UNSUBSCRIBE they
    /// trigger happen under it, so Redis sees them in the order the index changed.
    private final class Index: Sendable {
        let entries = Mutex<[String: Entry]>([:])
    }

    init(redis configuration: RedisConfiguration, logger: Logger) {
        let index = Index()
        var configuration = configuration
        configuration.clientName = "roomcast-subscriber"
        self.index = index
        self.logger = logger
        self.subscriber = RedisSubscriber(configuration: configuration, logger: logger) { event in
            switch event {
            case .message(let message):
                Self.deliver(message, from: index, logger: logger)
            case .connectionLost(let error):
                logger.warning("pub/sub connection lost; events may be missed until it is back", metadata: ["error": "\(error)"])
            case .restored(let channels):
                logger.info("pub/sub connection restored", metadata: ["channels": "\(channels.count)"])
            }
        }
    }

    func run() async throws {
        await subscriber.run()
    }

    /// Adds a session to a channel; the future completes once the node is subscribed to it.
    func add(_ session: SocketSession, as user: UserID, to channel: String, deadline: NIODeadline) -> EventLoopFuture<Void> {
        let member = Member(session: session, user: user.rawValue)
        return index.entries.withLock { entries in
            if var entry = entries[channel] {
                entry.sessions[ObjectIdentifier(session)] = member
                entries[channel] = entry
                return entry.subscribed
            }
            let subscribed = subscriber.startSubscribing([channel], deadline: deadline)
            entries[channel] = Entry(sessions: [ObjectIdentifier(session): member], subscribed: subscribed)
            return subscribed
        }
    }

    /// Removes a session from a channel; the last one out unsubscribes the node.
    func remove(_ session: SocketSession, from channel: String) {
        index.entries.withLock { entries in
            guard var entry = entries[channel], entry.sessions.removeValue(forKey: ObjectIdentifier(session)) != nil else { return }
            if entry.sessions.isEmpty {
                entries[channel] = nil
                _ = subscriber.startUnsubscribing([channel], deadline: .now() + .seconds(5))
            } else {
                entries[channel] = entry
            }
        }
    }

    /// The number of local sessions in a channel (for tests and metrics).
    func sessionCount(in channel: String) -> Int {
        index.entries.withLock { $0[channel]?.sessions.count ?? 0 }
    }

    private static func deliver(_ message: RedisPubSubMessage, from index: Index, logger: Logger) {
        guard let envelope = EventEnvelope(payload: message.payload) else {
            logger.error("dropped a malformed pub/sub payload", metadata: ["channel": "\(message.channel)"])
            return
        }
        // One copy of the recipient list per event; the frame bytes are shared, not copied.
        let sessions = index.entries.withLock { entries in entries[message.channel].map { Array($0.sessions.values) } } ?? []
        if envelope.listedFrame == nil {
            for member in sessions {
                member.session.deliver(envelope.frame, offset: envelope.offset, channel: message.channel)
            }
        } else {
            for member in sessions {
                member.session.deliver(envelope.frame(for: member.user), offset: envelope.offset, channel: message.channel)
            }
        }
    }
}
