import RedisClient

/// Reads Redis's own CPU use (`INFO cpu`).
struct RedisProbe: Sendable {
    let client: RedisClient

    init(url: String) async throws {
        client = RedisClient(configuration: try RedisConfiguration(url: url))
        let client = self.client
        Task { await client.run() }
    }

    /// `used_cpu_sys + used_cpu_user`, in seconds.
    func cpuSeconds() async throws -> Double {
        let info = try await client.send(RedisCommand("INFO", "cpu"), as: String.self)
        var total = 0.0
        for line in info.split(whereSeparator: \.isNewline) {
            let parts = line.split(separator: ":")
            if parts.count == 2, parts[0] == "used_cpu_sys" || parts[0] == "used_cpu_user", let value = Double(parts[1]) {
                total += value
            }
        }
        return total
    }
}
