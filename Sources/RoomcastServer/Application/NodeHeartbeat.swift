import Logging
import RoomcastCore
import ServiceLifecycle

/// Keeps this node in the node registry (`node:{<id>}`, `nodes:{registry}`): registers it once the
/// server listens, refreshes its entry and socket count every third of the TTL, and takes it out
/// on a graceful shutdown. A node that dies drops out by itself within one TTL.
///
/// After each beat it hands the outcome to the presence keeper (a lapsed lease means reapers may
/// have taken this node's members) and reaps the nodes whose entries expired: presence of their
/// sockets leaves the rooms within one TTL and a third of the node's death.
final class NodeHeartbeat: Service, Sendable {
    /// This node's id.
    let nodeID: NodeID
    private let registry: NodeRegistry
    private let ttl: Duration
    private let startedAt: Timestamp
    private let sockets: @Sendable () -> Int
    /// Told the live nodes after each heartbeat.
    private let onLiveNodes: @Sendable ([NodeInfo]) -> Void
    private let presence: PresenceKeeper?
    private let reaper: NodeReaper?
    private let logger: Logger
    private let address: AsyncStream<String>
    private let addressContinuation: AsyncStream<String>.Continuation

    /// - Parameters:
    ///   - sockets: the number of sockets connected to this node now.
    ///   - onLiveNodes: told the live nodes (this one among them) after each heartbeat.
    ///   - presence: told after each beat whether this node's lease had lapsed.
    ///   - reaper: cleans up after the nodes whose entries expired, after each beat.
    init(
        nodeID: NodeID, registry: NodeRegistry, ttl: Duration, sockets: @escaping @Sendable () -> Int,
        onLiveNodes: @escaping @Sendable ([NodeInfo]) -> Void = { _ in }, presence: PresenceKeeper? = nil, reaper: NodeReaper? = nil,
        logger: Logger
    ) {
        self.presence = presence
        self.reaper = reaper
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
            var registered = false
            while !Task.isCancelled {
                registered = await self.beat(info, registered: registered)
                guard (try? await Task.sleep(for: self.ttl / 3)) != nil else { break }
            }
            return true
        }
        guard registered else { return }
        // A few tries: right after a Redis blip the first command may meet a dead connection
        // while the pool reconnects. Past them the entry expires by itself within one TTL.
        // Sockets closed by the drain may still be leaving their rooms; failed leaves get one
        // more try. Whatever is then left in Redis is left to another node's reaper.
        if let presence {
            await presence.afterHeartbeat(lapsed: false)
            let clock = ContinuousClock()
            let deadline = clock.now + .seconds(2)
            while !presence.holdsNothing, clock.now < deadline {
                try? await Task.sleep(for: .milliseconds(50))
            }
        }
        for attempt in 1...Self.removalAttempts {
            do {
                // With members or sockets still in Redis (a removal failed), the entry stays
                // expired for another node's reaper, with the index naming where they are.
                let holdingNothing = presence?.holdsNothing ?? true
                try await registry.remove(nodeID, holdingNothing: holdingNothing)
                logger.info("node left the registry", metadata: ["node": "\(nodeID)", "reaped_by_others": "\(!holdingNothing)"])
                return
            } catch {
                logger.warning("node registry removal failed", metadata: ["node": "\(nodeID)", "attempt": "\(attempt)", "error": "\(error)"])
                try? await Task.sleep(for: .milliseconds(100 << attempt))
            }
        }
    }

    /// Tries to leave the registry on shutdown (about 3 s in all).
    static let removalAttempts = 5

    /// One heartbeat, then presence upkeep and reaping.
    /// - Parameter registered: an earlier beat succeeded (the first one always finds its hash new).
    /// - Returns: whether this node has registered by now.
    private func beat(_ info: NodeInfo, registered: Bool) async -> Bool {
        var info = info
        info.sockets = sockets()
        let beat: NodeRegistry.Beat
        do {
            beat = try await registry.heartbeat(info, ttl: ttl)
        } catch {
            logger.warning("node heartbeat failed", metadata: ["node": "\(nodeID)", "error": "\(error)"])
            return registered
        }
        if registered && beat.lapsed {
            logger.warning("node lease lapsed (a pause longer than node.ttl_ms, or Redis lost it)", metadata: ["node": "\(nodeID)"])
        }
        await presence?.afterHeartbeat(lapsed: registered && beat.lapsed)
        if let reaper, !beat.expired.isEmpty {
            do {
                // A sixth of the TTL at most: a big dead node is shared over several beats (and
                // nodes) rather than holding up this node's next heartbeat.
                let reaped = try await reaper.reap(beat.expired, within: ttl / 6)
                if reaped.rooms + reaped.users > 0 || !reaped.dropped.isEmpty {
                    logger.notice(
                        "reaped dead nodes",
                        metadata: [
                            "nodes": "\(reaped.dropped.map(\.rawValue))", "rooms": "\(reaped.rooms)", "users": "\(reaped.users)",
                            "members": "\(reaped.members)", "sockets": "\(reaped.sockets)",
                        ]
                    )
                }
            } catch {
                logger.warning("reaping dead nodes failed", metadata: ["nodes": "\(beat.expired.map(\.rawValue))", "error": "\(error)"])
            }
        }
        do {
            onLiveNodes(try await registry.liveNodes())
        } catch {
            logger.warning("reading live nodes failed", metadata: ["node": "\(nodeID)", "error": "\(error)"])
        }
        return true
    }
}
