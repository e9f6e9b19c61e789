import NIOCore
import NIOPosix
import Synchronization

/// The node's Engine.IO sessions that started with long-polling, by session id, until they end.
///
/// Poll and send requests find their session here; so does the WebSocket connection that
/// upgrades one.
final class PollingSessions: Sendable {
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
        let session = SocketSession(id: EngineIOSessionID.make(on: services.nodeID), pollingOn: loop)
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

    /// The number of sessions held (for tests and metrics).
    var count: Int { entries.withLock { $0.count } }
}
