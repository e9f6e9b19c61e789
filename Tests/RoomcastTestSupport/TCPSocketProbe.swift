import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Reads back, with `getsockopt`, the options of this process's TCP connections to a port: what
/// a client's socket options really did, not what its code asked for. `TCP_NODELAY` asked for at
/// the socket level is `SO_DEBUG`, which only root may set: as any other user every connect failed.
public enum TCPSocketProbe {
    /// What `getsockopt` reads on one connection.
    public struct Options: Equatable, Sendable, CustomStringConvertible {
        /// `IPPROTO_TCP`/`TCP_NODELAY`: Nagle's algorithm off.
        public var noDelay: Bool
        /// `SOL_SOCKET`/`SO_DEBUG`: needs `CAP_NET_ADMIN`; nothing of ours should ask for it.
        public var debug: Bool

        public init(noDelay: Bool, debug: Bool) {
            self.noDelay = noDelay
            self.debug = debug
        }

        public var description: String { "(TCP_NODELAY \(noDelay), SO_DEBUG \(debug))" }
    }

    /// The options of each established connection this process holds to `port` on loopback,
    /// found through `/proc/self/net/tcp{,6}` and the socket inodes of `/proc/self/fd`.
    public static func options(ofConnectionsTo port: Int) throws -> [Options] {
        let inodes = establishedSocketInodes(remotePort: port)
        var found: [Options] = []
        for entry in try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") {
            guard let descriptor = Int32(entry),
                  let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(entry)"),
                  target.hasPrefix("socket:["), inodes.contains(String(target.dropFirst(8).dropLast()))
            else { continue }
            guard let noDelay = flag(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY),
                  let debug = flag(descriptor, SOL_SOCKET, SO_DEBUG)
            else { continue }
            found.append(Options(noDelay: noDelay, debug: debug))
        }
        return found
    }

    private static func flag(_ descriptor: Int32, _ level: Int32, _ name: Int32) -> Bool? {
        var value: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(descriptor, level, name, &value, &length) == 0 else { return nil }
        return value != 0
    }

    /// The inodes of established TCP sockets whose remote port is `remotePort`.
    private static func establishedSocketInodes(remotePort: Int) -> Set<String> {
        var inodes: Set<String> = []
        for table in ["/proc/self/net/tcp", "/proc/self/net/tcp6"] {
            // Read to the end: /proc reports no size, and a one-read String(contentsOfFile:)
            // stops after the first page of a long table.
            guard let data = try? FileHandle(forReadingFrom: URL(fileURLWithPath: table)).readToEnd(),
                  let text = String(data: data, encoding: .ascii)
            else { continue }
            for row in text.split(separator: "\n").dropFirst() {
                let columns = row.split(separator: " ")
                guard columns.count > 9, columns[3] == "01",
                      let port = columns[2].split(separator: ":").last.flatMap({ Int($0, radix: 16) }), port == remotePort
                else { continue }
                inodes.insert(String(columns[9]))
            }
        }
        return inodes
    }
}
