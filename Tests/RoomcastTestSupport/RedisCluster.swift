import Foundation
import RedisClient

/// A private 3-master Redis Cluster on loopback, for one test or suite: three
/// `redis-server --cluster-enabled yes` (each a ``RedisServer`` with its own directory and
/// `nodes.conf`), joined by `redis-cli --cluster create`, optionally with replicas.
public actor RedisCluster {
    /// The masters as created, in the order `redis-cli --cluster create` was given them.
    public nonisolated let servers: [RedisServer]
    /// The replicas as created (`--cluster-replicas`), none by default.
    public nonisolated let replicas: [RedisServer]

    /// Masters and replicas.
    public nonisolated var allServers: [RedisServer] { servers + replicas }

    /// The masters' ports.
    public nonisolated var ports: [Int] { servers.map(\.port) }

    /// `redis-cli` options for every node: TLS ones for a TLS cluster, else none.
    public nonisolated let cliArguments: [String]

    /// `redis-cluster://127.0.0.1:<p1>,127.0.0.1:<p2>,127.0.0.1:<p3>` (`rediss-cluster://` over TLS).
    public nonisolated var url: String {
        (cliArguments.isEmpty ? "redis-cluster://" : "rediss-cluster://") + ports.map { "127.0.0.1:\($0)" }.joined(separator: ",")
    }

    /// Starts the servers, creates the cluster and waits until every node says `cluster_state:ok`
    /// (and every replica is in sync with its master).
    /// - Parameters:
    ///   - replicasPerMaster: replicas of each master (`redis-cli --cluster create --cluster-replicas`).
    ///   - arguments: extra `redis-server` options for every server (`--appendonly yes`).
    ///   - tls: TLS only, for clients, the cluster bus and replication alike (`--tls-cluster`,
    ///     `--tls-replication`): every node shows this certificate and trusts its authority.
    public init(masters: Int = 3, replicasPerMaster: Int = 0, arguments: [String] = [], tls: RedisServer.TLS? = nil) async throws {
        let cliTLS = tls?.cliArguments ?? []
        cliArguments = cliTLS
        let tlsArguments = tls == nil ? [] : ["--tls-cluster", "yes", "--tls-replication", "yes"]
        var started: [RedisServer] = []
        do {
            for _ in 0..<(masters * (1 + replicasPerMaster)) {
                started.append(
                    try await RedisServer(
                        arguments: ["--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf", "--cluster-node-timeout", "2000"]
                            + tlsArguments + arguments,
                        tls: tls
                    )
                )
            }
            let addresses = started.map { "127.0.0.1:\($0.port)" }
            let created = try await Self.cli(
                cliTLS + ["--cluster", "create"] + addresses + ["--cluster-replicas", "\(replicasPerMaster)", "--cluster-yes"]
            )
            guard created.contains("[OK] All 16384 slots covered") else {
                throw RedisServerError("redis-cli --cluster create failed: \(created)")
            }
            // redis-cli picks which nodes become masters: ask each node what it is.
            var masterServers: [RedisServer] = []
            var replicaServers: [RedisServer] = []
            for server in started {
                let role = try await Self.cli(cliTLS + ["-p", "\(server.port)", "ROLE"])
                if role.hasPrefix("master") { masterServers.append(server) } else { replicaServers.append(server) }
            }
            self.servers = masterServers
            self.replicas = replicaServers
            try await waitUntilStable()
        } catch {
            for server in started { await server.destroy() }
            throw error
        }
    }

    /// Stops every server and removes their directories.
    public func destroy() async {
        for server in allServers { await server.destroy() }
    }

    /// Runs `body` with a fresh cluster, then destroys it whatever happened.
    /// - Parameter replicasPerMaster: replicas of each master (none by default).
    public static func with<Result>(
        replicasPerMaster: Int = 0, arguments: [String] = [], tls: RedisServer.TLS? = nil, _ body: (RedisCluster) async throws -> Result
    ) async throws -> Result {
        let cluster = try await RedisCluster(replicasPerMaster: replicasPerMaster, arguments: arguments, tls: tls)
        do {
            let result = try await body(cluster)
            await cluster.destroy()
            return result
        } catch {
            await cluster.destroy()
            throw error
        }
    }

    /// Waits until every node reports `cluster_state:ok` and agrees on the slot map.
    public func waitUntilStable(timeout: Duration = .seconds(20)) async throws {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            var ok = true
            var maps: Set<String> = []
            for port in ports {
                let info = try await cli(port: port, ["CLUSTER", "INFO"])
                if !info.contains("cluster_state:ok") { ok = false }
                maps.insert(try await cli(port: port, ["CLUSTER", "SLOTS"]))
            }
            for replica in replicas {
                let replication = try await cli(port: replica.port, ["INFO", "replication"])
                if !replication.contains("master_link_status:up") { ok = false }
            }
            // `redis-cli --cluster check` also requires every node to agree on the configuration.
            if ok && maps.count == 1 {
                let check = try await Self.cli(cliArguments + ["--cluster", "check", "127.0.0.1:\(ports[0])"])
                if check.contains("[OK] All nodes agree about slots configuration.") && check.contains("[OK] All 16384 slots covered.")
                    && !check.contains("[WARNING]")
                {
                    return
                }
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw RedisServerError("the Redis Cluster did not become stable within \(timeout)")
    }

    /// `CLUSTER MYID` of the master on `port`.
    public nonisolated func nodeID(port: Int) async throws -> String {
        try await cli(port: port, ["CLUSTER", "MYID"]).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The port of the master serving `key`'s slot, as that master itself says: one of the
    /// masters as created or, after a failover, a promoted replica. Servers that do not answer
    /// (killed) are skipped.
    public nonisolated func port(servingKey key: String) async throws -> Int {
        let slot = Int(HashSlot(key: key).rawValue)
        for port in allServers.map(\.port) {
            guard let owned = try? await slots(ofPort: port) else { continue }
            if owned.contains(where: { $0.contains(slot) }) { return port }
        }
        throw RedisServerError("no master serves the slot of \(key)")
    }

    /// The replica of `master`, as the replicas' own `INFO replication` says (a replica that does
    /// not answer is skipped).
    public nonisolated func replica(of master: RedisServer) async throws -> RedisServer {
        for replica in replicas where (try? await cli(port: replica.port, ["INFO", "replication"]))?.contains("master_port:\(master.port)") == true {
            return replica
        }
        throw RedisServerError("no replica of the master on port \(master.port)")
    }

    /// The slots the master on `port` owns, as its own `CLUSTER NODES` line says.
    public nonisolated func slots(ofPort port: Int) async throws -> [ClosedRange<Int>] {
        let nodes = try await cli(port: port, ["CLUSTER", "NODES"])
        guard let line = nodes.split(separator: "\n").first(where: { $0.split(separator: " ").dropFirst(2).first?.contains("myself") == true }) else {
            throw RedisServerError("no myself line in CLUSTER NODES of \(port)")
        }
        return line.split(separator: " ").dropFirst(8).compactMap { range in
            // Slots being imported or migrated are listed as `[slot->-id]`: not owned yet.
            let bounds = range.split(separator: "-").compactMap { Int($0) }
            guard let low = bounds.first, !range.hasPrefix("[") else { return nil }
            return low...(bounds.last ?? low)
        }
    }

    /// `redis-cli --cluster reshard`: moves `slots` slots (with their keys) from one master to
    /// another, then waits until the cluster is stable again.
    public func reshard(fromPort: Int, toPort: Int, slots: Int) async throws {
        let from = try await nodeID(port: fromPort)
        let to = try await nodeID(port: toPort)
        let output = try await Self.cli(cliArguments + [
            "--cluster", "reshard", "127.0.0.1:\(fromPort)", "--cluster-from", from, "--cluster-to", to,
            "--cluster-slots", "\(slots)", "--cluster-yes",
        ])
        guard !output.contains("[ERR]") else { throw RedisServerError("reshard failed: \(output)") }
        try await waitUntilStable()
    }

    /// Runs `redis-cli` with `arguments` against the cluster and returns what it printed.
    public nonisolated func cli(port: Int, _ arguments: [String]) async throws -> String {
        try await Self.cli(cliArguments + ["-p", "\(port)"] + arguments)
    }

    /// Runs `redis-cli` and returns its output (stdout and stderr).
    public static func cli(_ arguments: [String]) async throws -> String {
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("roomcast-test-redis-cli.\(UUID().uuidString.prefix(8))")
        defer { try? FileManager.default.removeItem(at: output) }
        let process = try ChildProcess(executable: try cliExecutable(), arguments: arguments, outputPath: output.path)
        let status = await process.exitStatus(timeout: .seconds(60))
        let text = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
        guard status == 0 else { throw RedisServerError("redis-cli \(arguments.joined(separator: " ")) exited with \(status): \(text)") }
        return text
    }

    /// Where `redis-cli` is (`REDIS_CLI`, else the `PATH`).
    public static func cliExecutable() throws -> String {
        if let path = ProcessInfo.processInfo.environment["REDIS_CLI"] { return path }
        let searchPath = (ProcessInfo.processInfo.environment["PATH"] ?? "") + ":/usr/bin:/usr/local/bin"
        for directory in searchPath.split(separator: ":") {
            let candidate = "\(directory)/redis-cli"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        throw RedisServerError("redis-cli not found: install it (apt-get install redis-tools) or set REDIS_CLI")
    }
}
