import Logging
import RedisClient
import RoomcastCore

/// What a socket connection needs from the node, built once at start-up: the socket's own
/// bookkeeping (presence, the hub, previews) and ``RoomChanges``, through which its events change
/// rooms. Event handlers see none of it: they get what they need from ``SocketState``.
///
/// A class: every connection refers to the one instance (a struct this size, copied into each
/// connection's objects, was about a kilobyte per idle connection).
final class SocketServices: Sendable {
    /// This node's id in the node registry, made once at start-up.
    let nodeID: NodeID
    let settings: SocketSettings
    let hub: SocketHub
    let tokens: TokenService
    /// Every change a socket event makes, with its side effects.
    let changes: RoomChanges
    let eventLog: RoomEventLog
    let presence: PresenceKeeper
    /// Relays canvas previews (`element:drag`, `cursor:move`) through pub/sub only.
    let previews: CanvasPreviewRelay
    let events: SocketEventRouter
    let logger: Logger

    init(
        nodeID: NodeID,
        settings: SocketSettings,
        hub: SocketHub,
        tokens: TokenService,
        changes: RoomChanges,
        eventLog: RoomEventLog,
        presence: PresenceKeeper,
        previews: CanvasPreviewRelay,
        events: SocketEventRouter,
        logger: Logger
    ) {
        self.nodeID = nodeID
        self.settings = settings
        self.hub = hub
        self.tokens = tokens
        self.changes = changes
        self.eventLog = eventLog
        self.presence = presence
        self.previews = previews
        self.events = events
        self.logger = logger
    }
}
