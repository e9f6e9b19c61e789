import Logging
import RedisClient
import RoomcastCore

/// What a socket connection needs from the node, built once at start-up.
struct SocketServices: Sendable {
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
    let events: SocketEventRouter
    /// Limit for Redis-backed steps of a socket event (subscription confirmations).
    let redisTimeout: Duration
    let logger: Logger
}
