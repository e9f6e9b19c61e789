import Foundation

/// `idle`: `connections` authenticated sockets, round robin over the nodes, held for `seconds`;
/// reports each node's resident memory per connection (its RSS growth over the sockets it holds).
enum IdleConnections {
    static func run(_ context: BenchContext) async throws -> BenchReport {
        let options = context.options
        let count = options.connections
        // Several sockets per user, as devices and tabs do (the scripts raise socket.max_per_user).
        let users = try await context.registerUsers(max(1, (count + options.socketsPerUser - 1) / options.socketsPerUser), prefix: "i")
        // Let allocations made while registering settle before the baseline.
        try await Task.sleep(for: .seconds(1))
        let before = ProcessStats.read(options.pids)

        let connected = Counter()
        let ended = Counter()
        let connectStart = ContinuousClock.now
        let sockets = Task {
            await withTaskGroup(of: Void.self) { group in
                for index in 0..<count {
                    // At most `concurrency` handshakes under way; connected sockets stay open.
                    while index - connected.value - ended.value >= options.concurrency {
                        try? await Task.sleep(for: .milliseconds(1))
                    }
                    let socket = BenchSocket(
                        url: BenchSocket.url(context.gateway(index), token: users[index % users.count].token), rooms: [], outbox: nil,
                        onConnected: { connected.add() }
                    )
                    group.addTask {
                        try? await socket.run(logger: context.logger)
                        if !Task.isCancelled { ended.add() }
                    }
                }
                await group.waitForAll()
            }
        }
        while connected.value + ended.value < count, ContinuousClock.now - connectStart < .seconds(600) {
            try await Task.sleep(for: .milliseconds(20))
        }
        let connectTime = (ContinuousClock.now - connectStart).seconds
        let connectErrors = count - connected.value
        print("connected \(connected.value) of \(count) sockets in \(connectTime.formatted(1)) s; holding them \(options.seconds) s")
        try await Task.sleep(for: .seconds(options.seconds))
        let after = ProcessStats.read(options.pids)
        let dropped = ended.value - connectErrors
        sockets.cancel()

        var report = BenchReport(scenario: "idle")
        report.add("connections", connected.value)
        report.add("connect_errors", connectErrors)
        report.add("dropped_while_idle", dropped)
        report.add("connect_seconds", connectTime)
        report.add("held_seconds", options.seconds)
        report.line("idle: \(connected.value) connections (\(connectErrors) connect errors, \(dropped) dropped) over \(options.gateways.count) node(s), held \(options.seconds) s")
        // pids[i] is the node at gateways[i]; it holds the sockets whose index is i modulo the nodes.
        var perNode: [String] = []
        for (node, (start, end)) in zip(before, after).enumerated() where node < options.gateways.count {
            let held = (0..<count).filter { $0 % options.gateways.count == node }.count
            let perConnection = held > 0 ? Double(end.rssBytes - start.rssBytes) / Double(held) : 0
            perNode.append(perConnection.formatted(0))
            report.line("node \(node + 1): RSS \(start.rssBytes / 1_048_576) → \(end.rssBytes / 1_048_576) MiB for \(held) connections: \((perConnection / 1024).formatted(2)) KiB per connection")
        }
        if !perNode.isEmpty {
            report.add("rss_bytes_per_connection", perNode.first.flatMap(Double.init), digits: 0)
        }
        return report
    }
}
