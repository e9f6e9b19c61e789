public import NIOCore
public import NIOHTTP1
import Synchronization

/// A server's open connections by the address they come from, so that one address cannot hold
/// the node's descriptors (up to the idle timeout each). Counted by the connection's peer, a
/// connection over `limit` is closed as it is accepted, before it costs a read. Behind a proxy
/// the server trusts, the peer is the proxy: connections are counted then under the client
/// address their first request names, and one over the limit is answered 429 and closed. The
/// addresses set with ``exempt(_:)`` are not counted: the gateway's sibling nodes, whose
/// forwarded connections each stand for a client counted where it connected.
public final class ConnectionsPerAddress: Sendable {
    /// Where a connection's address comes from.
    public enum Source: Sendable {
        /// The connection's peer.
        case peer
        /// What the connection's first request says (a trusted proxy's `X-Forwarded-For`), or
        /// the peer when it says nothing.
        case firstRequest(@Sendable (HTTPRequestHead) -> String?)
    }

    /// Connections one address may hold at once.
    public let limit: Int
    let source: Source
    private struct State {
        var counts: [String: Int] = [:]
        var exempt: Set<String> = []
    }
    private let state = Mutex(State())

    public init(limit: Int, source: Source = .peer) {
        self.limit = limit
        self.source = source
    }

    /// Addresses not counted from now on (connections already counted stay counted).
    public func exempt(_ addresses: Set<String>) {
        state.withLock { $0.exempt = addresses }
    }

    /// Counts `channel` under `address` (its peer's by default) until it closes.
    /// - Returns: false, counting nothing, when that address holds `limit` connections already.
    func admit(_ channel: any Channel, as address: String? = nil) -> Bool {
        guard let address = address ?? channel.remoteAddress?.ipAddress else { return true }
        let counted = state.withLock { state -> Bool? in
            if state.exempt.contains(address) { return nil }
            let count = state.counts[address, default: 0]
            guard count < limit else { return false }
            state.counts[address] = count + 1
            return true
        }
        guard let counted else { return true }
        if counted { channel.closeFuture.whenComplete { _ in self.release(address) } }
        return counted
    }

    /// The connections `address` holds now.
    public func count(of address: String) -> Int {
        state.withLock { $0.counts[address, default: 0] }
    }

    private func release(_ address: String) {
        state.withLock { state in
            let count = state.counts[address, default: 1] - 1
            state.counts[address] = count > 0 ? count : nil
        }
    }
}

/// Counts a connection under the client address its first request names (``ConnectionsPerAddress/Source/firstRequest(_:)``):
/// over the limit, that request is answered 429 and the connection closed; else the handler
/// leaves. Sits right after the request decoder.
final class FirstRequestAdmission: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    private let connections: ConnectionsPerAddress
    private let address: @Sendable (HTTPRequestHead) -> String?
    /// The first request was refused: what follows of it is dropped.
    private var isRefused = false

    init(connections: ConnectionsPerAddress, address: @escaping @Sendable (HTTPRequestHead) -> String?) {
        self.connections = connections
        self.address = address
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !isRefused else { return }
        guard case .head(let head) = unwrapInboundIn(data) else { return context.fireChannelRead(data) }
        guard connections.admit(context.channel, as: address(head)) else {
            isRefused = true
            context.answerWithoutBody(.tooManyRequests, thenClose: .all)
            return
        }
        context.fireChannelRead(data)
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
    }
}

@available(*, unavailable)
extension FirstRequestAdmission: Sendable {}
