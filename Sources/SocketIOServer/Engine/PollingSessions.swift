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

    /// A handshake refused because the server is draining.
    struct Draining: Error {}

    private struct State {
        var entries: [String: Entry] = [:]
        /// Set by ``drainAll()``: no session starts any more.
        var isDraining = false
    }

    private let state = Mutex(State())

    /// Whether the server is draining (its sessions were sent away, and no new one starts).
    var isDraining: Bool { state.withLock { $0.isDraining } }

    /// Starts a session for `server` (its open packet waits for the first poll) on one of NIO's loops.
    /// - Throws: ``Draining`` once the server drains.
    func open(for server: EngineIOServer, opening: EngineIOOpening) async throws -> Entry {
        guard !isDraining else { throw Draining() }
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        let session = EngineIOConnection(
            id: server.application.makeSessionID(), pollingOn: loop, maxQueuedBytes: server.settings.pollingQueueBytes, gauges: server.gauges
        )
        return try await loop.submit { [self] in
            let handler = server.application.handler(for: session, opening: opening)
            let engine = EngineIOSession(
                session: session, handler: handler, settings: server.settings, wheel: server.wheels.wheel(on: loop), loop: loop,
                upgrades: ["websocket"],
                onEnd: { [self] in state.withLock { _ = $0.entries.removeValue(forKey: session.id) } }
            )
            let entry = Entry(session: session, engine: NIOLoopBound(engine, eventLoop: loop))
            // Under the lock that ``drainAll()`` sets the flag under: a session either is in the
            // entries it drains or is never added.
            let admitted = state.withLock { state in
                guard !state.isDraining else { return false }
                state.entries[session.id] = entry
                return true
            }
            guard admitted else {
                engine.end()
                throw Draining()
            }
            return entry
        }.get()
    }

    /// The session with this id, if this server holds it.
    func entry(_ sid: String) -> Entry? {
        state.withLock { $0.entries[sid] }
    }

    /// Sends every session away as a lost transport (``EngineIOSession/drain()``), so clients
    /// reconnect elsewhere at once instead of holding a drain up until their next ping; from
    /// here on no session starts.
    func drainAll() {
        let entries = state.withLock { state in
            state.isDraining = true
            return Array(state.entries.values)
        }
        for entry in entries {
            let engine = entry.engine
            engine.eventLoop.execute { engine.value.drain() }
        }
    }
}
