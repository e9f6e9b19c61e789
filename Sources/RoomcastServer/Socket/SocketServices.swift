import Logging
import RedisClient
import RoomcastCore

/// What a socket connection needs from the node, built once at start-up.
///
/// A class: every connection refers to the one instance (a struct this size, copied into each
/// connection's objects, was about a kilobyte per idle connection).
final class SocketServices: Sendable {
    /// This node's id in the node registry, made once at start-up.
    let nodeID: NodeID
    let settings: SocketSettings
    let hub: SocketHub
    let tokens: TokenService
    let users: UserStore
    let rooms: RoomStore
    let messages: MessageStore
    let elements: ElementStore
    let eventLog: RoomEventLog
    let reactions: ReactionStore
    let notifier: Notifier
    let presence: PresenceKeeper
    let userEvents: UserEvents
    /// Relays canvas previews (`element:drag`, `cursor:move`) through pub/sub only.
    let previews: CanvasPreviewRelay
    let events: SocketEventRouter
    /// Limit for Redis-backed steps of a socket event (subscription confirmations).
    let redisTimeout: Duration
    let logger: Logger

    init(
        nodeID: NodeID,
        settings: SocketSettings,
        hub: SocketHub,
        tokens: TokenService,
        users: UserStore,
        rooms: RoomStore,
        messages: MessageStore,
        elements: ElementStore,
        eventLog: RoomEventLog,
        reactions: ReactionStore,
        notifier: Notifier,
        presence: PresenceKeeper,
        userEvents: UserEvents,
        previews: CanvasPreviewRelay,
        events: SocketEventRouter,
        redisTimeout: Duration,
        logger: Logger
    ) {
        self.nodeID = nodeID
        self.settings = settings
        self.hub = hub
        self.tokens = tokens
        self.users = users
        self.rooms = rooms
        self.messages = messages
        self.elements = elements
        self.eventLog = eventLog
        self.reactions = reactions
        self.notifier = notifier
        self.presence = presence
        self.userEvents = userEvents
        self.previews = previews
        self.events = events
        self.redisTimeout = redisTimeout
        self.logger = logger
    }
}
