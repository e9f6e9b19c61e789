import RedisClient

/// Reads Redis's own CPU use (`INFO cpu`), summed over every master of a cluster.
struct RedisProbe: Sendable {
    /// One client per server: `INFO` answers for the server it is sent to.
    let clients: [RedisClient]

    /// - Parameter url: `redis://…`, or `redis-cluster://…` listing every master.
    init(url: String) async throws {
        let configuration = try RedisConfiguration(url: url)
        let servers: [RedisConfiguration]
        switch configuration.mode {
        case .standalone:
            servers = [configuration]
        case .cluster(let seeds):
            servers = seeds.map { seed in
                var server = configuration
                server.mode = .standalone
                server.endpoint = seed
                return server
            }
        }
        clients = servers.map { RedisClient(configuration: $0) }
        for client in clients {
            Task { await client.run() }
        }
    }

    /// `used_cpu_sys + used_cpu_user` of every server, in seconds.
    func cpuSeconds() async throws -> Double {
        var total = 0.0
        for client in clients {
            let info = try await client.send(RedisCommand("INFO", "cpu"), as: String.self)
            for line in info.split(whereSeparator: \.isNewline) {
                let parts = line.split(separator: ":")
                if parts.count == 2, parts[0] == "used_cpu_sys" || parts[0] == "used_cpu_user", let value = Double(parts[1]) {
                    total += value
                }
            }
        }
        return total
    }
}
