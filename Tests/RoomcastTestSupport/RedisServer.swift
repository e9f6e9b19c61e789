public import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A private `redis-server` on a free loopback port, for one test or suite.
///
/// Tests never assume a Redis is already running. Each server gets its own temporary directory
/// (named `roomcast-test-redis.*`, so the test script can sweep up strays after a crash).
public actor RedisServer {
    /// TLS for a test server: the certificate it shows (its authority is the one it trusts for
    /// clients and peers), and whether it asks clients for a certificate (`tls-auth-clients`).
    public struct TLS: Sendable {
        public var certificate: TestCertificate
        public var authClients: Bool

        public init(certificate: TestCertificate, authClients: Bool = false) {
            self.certificate = certificate
            self.authClients = authClients
        }

        /// `redis-server` options: TLS alone on `port` (`--port 0`: no plain TCP).
        func arguments(port: Int) -> [String] {
            [
                "--port", "0", "--tls-port", "\(port)", "--tls-cert-file", certificate.certificateFile, "--tls-key-file", certificate.keyFile,
                "--tls-ca-cert-file", certificate.authority, "--tls-auth-clients", authClients ? "yes" : "no",
            ]
        }

        /// `redis-cli` options to talk to such a server: its authority, and this certificate as the
        /// client's.
        public var cliArguments: [String] {
            ["--tls", "--cacert", certificate.authority, "--cert", certificate.certificateFile, "--key", certificate.keyFile]
        }
    }

    /// The TCP port it listens on (kept across ``restart()``).
    public nonisolated let port: Int
    /// Its working directory (AOF files, log).
    public nonisolated let directory: URL
    /// True when it listens with TLS only (`rediss://`).
    public nonisolated let usesTLS: Bool
    private let extraArguments: [String]
    private var tls: TLS?
    private var process: ChildProcess?

    /// `redis://127.0.0.1:<port>`, or `rediss://` for a TLS server.
    public nonisolated var url: String { "\(usesTLS ? "rediss" : "redis")://127.0.0.1:\(port)" }

    /// Starts a server and waits until it answers `PING` (with TLS: until it accepts connections).
    /// - Parameters:
    ///   - arguments: extra `redis-server` options, e.g. `["--requirepass", "secret"]`.
    ///   - tls: TLS only, on the server's port.
    public init(arguments: [String] = [], tls: TLS? = nil) async throws {
        directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("roomcast-test-redis.\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        extraArguments = arguments
        self.tls = tls
        usesTLS = tls != nil
        // A cluster node also listens on its cluster bus port, its port + 10000.
        let needsBusPort = arguments.contains("--cluster-enabled")
        var lastError: (any Error)?
        for _ in 0..<5 {
            let candidate = try Self.freePort(withBusPort: needsBusPort)
            do {
                process = try Self.launch(port: candidate, directory: directory, arguments: arguments, tls: tls)
                try await Self.waitUntilReady(port: candidate, process: process, tls: tls != nil)
                port = candidate
                return
            } catch {
                // Another process may have taken the port between probe and bind: try another.
                lastError = error
                await process?.terminate()
                process = nil
            }
        }
        throw lastError ?? RedisServerError("redis-server did not start")
    }

    /// Stops the server (SIGTERM) and waits for it to exit.
    public func stop() async {
        guard let process else { return }
        self.process = nil
        process.signal(SIGCONT)  // a frozen server would not act on SIGTERM
        await process.terminate()
    }

    /// Kills the server (SIGKILL) as a crash would: no shutdown, no final AOF rewrite or flush.
    public func kill() async {
        guard let process else { return }
        self.process = nil
        process.signal(SIGKILL)
        _ = await process.exitStatus()
    }

    /// Freezes the server (SIGSTOP), as a hung machine or a link that drops packets would: its
    /// connections stay open and nothing is answered until ``thaw()``.
    public func freeze() {
        process?.signal(SIGSTOP)
    }

    /// Lets a frozen server go on (SIGCONT): it answers what was sent to it meanwhile.
    public func thaw() {
        process?.signal(SIGCONT)
    }

    /// Stops and starts the server again on the same port.
    public func restart() async throws {
        await stop()
        try await start()
    }

    /// Starts a stopped server on the same port.
    public func start() async throws {
        guard process == nil else { return }
        process = try Self.launch(port: port, directory: directory, arguments: extraArguments, tls: tls)
        try await Self.waitUntilReady(port: port, process: process, tls: tls != nil)
    }

    /// Stops a TLS server and starts it again on the same port with another certificate.
    public func restart(tls: TLS) async throws {
        precondition(usesTLS, "a plain server stays plain")
        await stop()
        self.tls = tls
        try await start()
    }

    /// `redis-cli` options to reach this server: TLS ones for a TLS server.
    public var cliArguments: [String] { tls?.cliArguments ?? [] }

    /// Stops the server and removes its directory.
    public func destroy() async {
        await stop()
        try? FileManager.default.removeItem(at: directory)
    }

    /// Runs `body` with a fresh server, then destroys it whatever happened.
    public static func with<Result>(
        arguments: [String] = [],
        tls: TLS? = nil,
        _ body: (RedisServer) async throws -> Result
    ) async throws -> Result {
        let server = try await RedisServer(arguments: arguments, tls: tls)
        do {
            let result = try await body(server)
            await server.destroy()
            return result
        } catch {
            await server.destroy()
            throw error
        }
    }

    // MARK: Process

    private static func launch(port: Int, directory: URL, arguments: [String], tls: TLS?) throws -> ChildProcess {
        try ChildProcess(
            executable: try executable(),
            arguments: (tls?.arguments(port: port) ?? ["--port", "\(port)"]) + [
                "--bind", "127.0.0.1", "--dir", directory.path,
                "--save", "", "--appendonly", "no", "--daemonize", "no", "--protected-mode", "no",
                "--logfile", directory.appendingPathComponent("redis.log").path, "--loglevel", "warning",
                // Keeps the command line (with the directory name) visible to `pkill -f`.
                "--set-proc-title", "no",
            ] + arguments
        )
    }

    private static func executable() throws -> String {
        if let path = ProcessInfo.processInfo.environment["REDIS_SERVER"] { return path }
        let searchPath = (ProcessInfo.processInfo.environment["PATH"] ?? "") + ":/usr/bin:/usr/local/bin:/usr/sbin"
        for directory in searchPath.split(separator: ":") {
            let candidate = "\(directory)/redis-server"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        throw RedisServerError("redis-server not found: install it (apt-get install redis-server) or set REDIS_SERVER")
    }

    private static func waitUntilReady(port: Int, process: ChildProcess?, tls: Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            guard let process, process.isRunning else {
                throw RedisServerError("redis-server exited during start-up on port \(port)")
            }
            // A TLS port takes no plain PING; Redis listens once it is set up.
            if tls ? accepts(port: port) : ping(port: port) { return }
            try await Task.sleep(for: .milliseconds(10))
        }
        throw RedisServerError("redis-server on port \(port) did not answer PING within 30 s")
    }

    /// Ports handed out in this test process, never handed out twice: tests run in parallel, and
    /// a port probed free by one could otherwise be probed free by another before either binds it.
    private static let handedOut = Mutex<Set<Int>>([])

    /// A port the kernel considers free right now and no other test of this process was given;
    /// with `withBusPort`, port + 10000 (a cluster node's bus) is free and reserved too.
    static func freePort(withBusPort: Bool = false) throws -> Int {
        for _ in 0..<100 {
            let port = try probeFreePort()
            if withBusPort {
                guard port + 10_000 <= 65_535, isFree(port + 10_000) else { continue }
            }
            let ports = withBusPort ? [port, port + 10_000] : [port]
            let reserved = handedOut.withLock { handedOut in
                guard ports.allSatisfy({ !handedOut.contains($0) }) else { return false }
                handedOut.formUnion(ports)
                return true
            }
            if reserved { return port }
        }
        throw RedisServerError("no free loopback port\(withBusPort ? " with a free bus port (+10000)" : "") after 100 tries")
    }

    /// A port the kernel gives to a socket bound to port 0.
    private static func probeFreePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw RedisServerError("socket() failed") }
        defer { close(fd) }
        var address = loopback(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0 else { throw RedisServerError("bind() failed") }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Whether `port` can be bound on loopback right now.
    private static func isFree(_ port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = loopback(port: port)
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        } == 0
    }

    /// Whether a TCP connection to `port` on loopback is accepted.
    static func accepts(port: Int) -> Bool {
        withConnection(to: port) { _ in true } ?? false
    }

    /// Runs `body` on a blocking socket connected to `port` on loopback; `nil` when none connects.
    private static func withConnection(to port: Int, _ body: (Int32) -> Bool) -> Bool? {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var address = loopback(port: port)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        return connected == 0 ? body(fd) : nil
    }

    /// One blocking `PING` over a fresh socket: true once Redis answers (`+PONG`, or `-NOAUTH` when
    /// it wants a password).
    static func ping(port: Int) -> Bool {
        withConnection(to: port) { fd in
            let request = Array("PING\r\n".utf8)
            guard write(fd, request, request.count) == request.count else { return false }
            var reply = [UInt8](repeating: 0, count: 64)
            let count = read(fd, &reply, reply.count)
            return count >= 5 && (reply.prefix(5).elementsEqual("+PONG".utf8) || reply.prefix(7).elementsEqual("-NOAUTH".utf8))
        } ?? false
    }

    private static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }
}

/// Why a test Redis could not be started.
public struct RedisServerError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
