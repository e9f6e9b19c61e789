import NIOCore

extension ClusterTopology {
    /// Reads the slot map with `CLUSTER SLOTS` from one node, over a connection of its own.
    static func read(from endpoint: RedisEndpoint, configuration: RedisConfiguration, eventLoop: any EventLoop) async throws(RedisError) -> ClusterTopology {
        var nodeConfiguration = configuration
        nodeConfiguration.endpoint = endpoint
        nodeConfiguration.clientName = nil
        let connection = try await RedisConnection.connect(configuration: nodeConfiguration, eventLoop: eventLoop)
        defer { connection.closeSoon() }
        let reply = try await connection.send(RedisCommand("CLUSTER", "SLOTS"), deadline: .now() + TimeAmount(configuration.commandTimeout))
        let topology = try ClusterTopology(clusterSlots: reply, answeredBy: endpoint, template: configuration.endpoint)
        guard !topology.masters.isEmpty else {
            throw RedisError(.unexpectedReply, "\(endpoint) knows no slot: is the cluster created?")
        }
        return topology
    }

    /// Reads the slot map from the first of `endpoints` that answers.
    static func read(fromAny endpoints: [RedisEndpoint], configuration: RedisConfiguration, eventLoopGroup: any EventLoopGroup) async throws(RedisError) -> ClusterTopology {
        var lastError = RedisError(.connectionFailed, "no Redis Cluster node to read the slot map from")
        for endpoint in endpoints {
            do {
                return try await read(from: endpoint, configuration: configuration, eventLoop: eventLoopGroup.next())
            } catch {
                lastError = error
            }
        }
        throw lastError
    }
}
