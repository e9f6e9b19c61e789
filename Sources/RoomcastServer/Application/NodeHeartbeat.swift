import Logging
import RoomcastCore
import ServiceLifecycle

/// Keeps this node in the node registry (`node:{<id>}`, `nodes:{registry}`): registers it once the
/// server listens, refreshes its entry and socket count every third of the TTL, and takes it out
/// on a graceful shutdown. A node that dies drops out by itself within one TTL.
final class NodeHeartbeat: Service, Sendable {
    /// This node's id.
    let nodeID: NodeID
    private let registry: NodeRegistry
    private let ttl: Duration
    private let startedAt: Timestamp
    private let sockets: @Sendable () -> Int
    /// Told the live nodes after each heartbeat.
    private let onLiveNodes: @Sendable ([NodeInfo]) -> Void
    private let logger: Logger
    private let address: AsyncStream<String>
    private let addressContinuation: AsyncStream<String>.Continuation

    /// - Parameters:
    ///   - sockets: the number of sockets connected to this node now.
    ///   - onLiveNodes: told the live nodes (this one among them) after each heartbeat.
    init(
        nodeID: NodeID, registry: NodeRegistry, ttl: Duration, sockets: @escaping @Sendable () -> Int,
        onLiveNodes: @escaping @Sendable ([NodeInfo]) -> Void = { _ in }, logger: Logger
    ) {
        self.nodeID = nodeID
        self.registry = registry
        self.ttl = ttl
        self.startedAt = .now()
        self.sockets = sockets
        self.onLiveNodes = onLiveNodes
        self.logger = logger
        (address, addressContinuation) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(1))
    }

    /// The server listens: other nodes reach this one at `url`. The first heartbeat waits for it,
    /// so no node is sent to one that does not accept connections yet.
    func serverStarted(advertising url: String) {
        addressContinuation.yield(url)
        addressContinuation.finish()
    }

    func run() async {
        let registered = await cancelWhenGracefulShutdown {
            var addresses = self.address.makeAsyncIterator()
            guard let url = await addresses.next() else { return false }
            let info = NodeInfo(id: self.nodeID, address: url, startedAt: self.startedAt, sockets: 0)
            self.logger.info("node registered", metadata: ["node": "\(self.nodeID)", "address": "\(url)"])
            while !Task.isCancelled {
                await self.beat(info)
                guard (try? await Task.sleep(for: self.ttl / 3)) != nil else { break }
            }
            return true
        }
        guard registered else { return }
        // A few tries: right after a Redis blip the first command may meet a dead connection
        // while the pool reconnects. Past them the entry expires by itself within one TTL.
        for attempt in 1...Self.removalAttempts {
            do {
                try await registry.remove(nodeID)
                logger.info("node left the registry", metadata: ["node": "\(nodeID)"])
                return
            } catch {
                logger.warning("node registry removal failed", metadata: ["node": "\(nodeID)", "attempt": "\(attempt)", "error": "\(error)"])
                try? await Task.sleep(for: .milliseconds(100 << attempt))
            }
        }
    }

    /// Tries to leave the registry on shutdown (about 3 s in all).
    static let removalAttempts = 5

    private func beat(_ info: NodeInfo) async {
        var info = info
        info.sockets = sockets()
        do {
            try await registry.heartbeat(info, ttl: ttl)
            onLiveNodes(try await registry.liveNodes())
        } catch {
            logger.warning("node heartbeat failed", metadata: ["node": "\(nodeID)", "error": "\(error)"])
        }
    }
}
