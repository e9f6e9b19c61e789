import NIOCore
import NIOPosix
import NIOWebSocket
import ServiceLifecycle
import Synchronization

/// The node's Engine.IO sessions that started with long-polling, by session id, until they end.
///
/// Poll and send requests find their session here; so does the WebSocket connection that
/// upgrades one. As a service it drains them on shutdown: each pending poll is answered with
/// Engine.IO's close packet, so clients reconnect elsewhere instead of holding the drain up until
/// their next ping.
final class PollingSessions: Service, Sendable {
    /// A session and its Engine.IO state (used on that state's loop only).
    struct Entry: Sendable {
        let session: SocketSession
        let engine: NIOLoopBound<EngineIOSession>
    }

    private let services: SocketServices
    private let entries = Mutex<[String: Entry]>([:])

    init(services: SocketServices) {
        self.services = services
    }

    /// Starts a session (its open packet waits for the first poll) on one of NIO's loops.
    func open(upgradeToken: String?) async throws -> Entry {
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        let session = SocketSession(
            id: EngineIOSessionID.make(on: services.nodeID), pollingOn: loop, maxQueuedBytes: services.settings.outboundQueueBytes
        )
        let services = self.services
        let entry = try await loop.submit { [self] in
            let engine = EngineIOSession(
                session: session, services: services, upgradeToken: upgradeToken, loop: loop, upgrades: ["websocket"],
                onEnd: { [self] in entries.withLock { _ = $0.removeValue(forKey: session.id) } }
            )
            let entry = Entry(session: session, engine: NIOLoopBound(engine, eventLoop: loop))
            entries.withLock { $0[session.id] = entry }
            return entry
        }.get()
        return entry
    }

    /// The session with this id, if this node holds it.
    func entry(_ sid: String) -> Entry? {
        entries.withLock { $0[sid] }
    }

    /// Waits for the graceful shutdown, then closes every session still polling.
    func run() async {
        try? await gracefulShutdown()
        for entry in entries.withLock({ Array($0.values) }) {
            let engine = entry.engine
            engine.eventLoop.execute { engine.value.close(.goingAway, reason: "server shutting down") }
        }
    }

    /// The number of sessions held (for tests and metrics).
    var count: Int { entries.withLock { $0.count } }
}
