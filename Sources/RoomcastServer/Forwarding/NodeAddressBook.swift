import Foundation
import NIOCore
import RoomcastCore
import Synchronization

/// Where the other gateway nodes listen, read from the node registry and kept for a few seconds:
/// a forwarded poll every few seconds per session must not cost a Redis round trip each.
final class NodeAddressBook: Sendable {
    private struct Entry {
        let address: SocketAddress
        let until: ContinuousClock.Instant
    }

    private let registry: NodeRegistry
    private let lifetime: Duration
    private let entries = Mutex<[NodeID: Entry]>([:])

    /// - Parameter lifetime: how long an address is used before the registry is read again.
    init(registry: NodeRegistry, lifetime: Duration = .seconds(5)) {
        self.registry = registry
        self.lifetime = lifetime
    }

    /// The address of a live node, or `nil` when the registry does not know it (or Redis cannot
    /// be read: then the session cannot be reached either way).
    func address(of node: NodeID) async -> SocketAddress? {
        let now = ContinuousClock.now
        if let entry = entries.withLock({ $0[node] }), entry.until > now { return entry.address }
        guard let info = try? await registry.node(node), let address = Self.socketAddress(info.address) else {
            entries.withLock { _ = $0.removeValue(forKey: node) }
            return nil
        }
        entries.withLock { $0[node] = Entry(address: address, until: now + lifetime) }
        return address
    }

    /// `http://host:port` as a socket address (the host resolved once here).
    static func socketAddress(_ url: String) -> SocketAddress? {
        guard let components = URLComponents(string: url), components.scheme == "http", let host = components.host else { return nil }
        let unbracketed = host.hasPrefix("[") ? String(host.dropFirst().dropLast()) : host
        return try? SocketAddress.makeAddressResolvingHost(unbracketed, port: components.port ?? 80)
    }
}
