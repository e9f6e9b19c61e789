import NIOCore
import NIOPosix
import NIOWebSocket
import Synchronization

/// A server's Engine.IO sessions that started with long-polling, by session id, until they end.
///
/// Poll and send requests find their session here; so does the WebSocket connection that
/// upgrades one.
final class PollingSessions: Sendable {
    /// A session and its Engine.IO state (used on that state's loop only).
    struct Entry: Sendable {
        let session: EngineIOConnection
        let engine: NIOLoopBound<EngineIOSession>
    }

    private let entries = Mutex<[String: Entry]>([:])

    /// Starts a session for `server` (its open packet waits for the first poll) on one of NIO's loops.
    func open(for server: EngineIOServer, opening: EngineIOOpening) async throws -> Entry {
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        let session = EngineIOConnection(
            id: server.application.makeSessionID(), pollingOn: loop, maxQueuedBytes: server.settings.pollingQueueBytes, gauges: server.gauges
        )
        return try await loop.submit { [self] in
            let handler = server.application.handler(for: session, opening: opening)
            let engine = EngineIOSession(
                session: session, handler: handler, settings: server.settings, wheel: server.wheels.wheel(on: loop), loop: loop,
                upgrades: ["websocket"],
                onEnd: { [self] in entries.withLock { _ = $0.removeValue(forKey: session.id) } }
            )
            let entry = Entry(session: session, engine: NIOLoopBound(engine, eventLoop: loop))
            entries.withLock { $0[session.id] = entry }
            return entry
        }.get()
    }

    /// The session with this id, if this server holds it.
    func entry(_ sid: String) -> Entry? {
        entries.withLock { $0[sid] }
    }

    /// Closes every session still polling: each pending poll is answered with Engine.IO's close
    /// packet, so clients reconnect elsewhere instead of holding a drain up until their next ping.
    func closeAll() {
        for entry in entries.withLock({ Array($0.values) }) {
            let engine = entry.engine
            engine.eventLoop.execute { engine.value.close(.goingAway, reason: "server shutting down", because: .serverShutdown) }
        }
    }
}
