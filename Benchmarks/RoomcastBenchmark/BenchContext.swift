import Foundation
import Logging
import Synchronization

/// What every scenario shares: options, the gateways' REST APIs, a run id that keeps user names
/// unique across runs on one Redis, and helpers for bounded parallel setup.
struct BenchContext: Sendable {
    let options: Options
    let apis: [BenchAPI]
    let run: String
    let logger: Logger

    init(options: Options) {
        self.options = options
        self.apis = options.gateways.map { BenchAPI(base: $0) }
        self.run = "b\(UInt32.random(in: 0...UInt32.max))"
        var logger = Logger(label: "bench")
        logger.logLevel = .error
        self.logger = logger
    }

    /// The gateway base URL for the `index`th socket or call, round robin.
    func gateway(_ index: Int) -> String { options.gateways[index % options.gateways.count] }

    /// Registers `count` users, 32 at a time, spread over the nodes.
    func registerUsers(_ count: Int, prefix: String) async throws -> [BenchAPI.Session] {
        let (apis, run) = (self.apis, self.run)
        return try await Self.parallel(count, width: 32) { index in
            try await apis[index % apis.count].register("\(run)\(prefix)\(index)")
        }
    }

    /// `body(0..<count)` with at most `width` running at once; results in index order.
    static func parallel<T: Sendable>(_ count: Int, width: Int, _ body: @escaping @Sendable (Int) async throws -> T) async throws -> [T] {
        try await withThrowingTaskGroup(of: (Int, T).self) { group in
            var results = [T?](repeating: nil, count: count)
            var next = 0
            while next < min(width, count) {
                let index = next
                group.addTask { (index, try await body(index)) }
                next += 1
            }
            while let (index, result) = try await group.next() {
                results[index] = result
                if next < count {
                    let index = next
                    group.addTask { (index, try await body(index)) }
                    next += 1
                }
            }
            return results.map { $0! }
        }
    }

    /// Connects `members` sockets to each of `rooms`, member `m` of room `r` as `user(r, m)` on
    /// gateway `node(r, m)`, the first of each room sending what `outboxes[r]` yields; returns
    /// once every socket joined, with the task that runs them (cancel it to close them).
    /// - Parameter onEvent: every event frame a socket gets, with its room and member index.
    func roomSockets(
        rooms: [String], members: Int, outboxes: [AsyncStream<String>],
        user: @escaping @Sendable (_ room: Int, _ member: Int) -> BenchAPI.Session,
        node: @escaping @Sendable (_ room: Int, _ member: Int) -> Int,
        onEvent: @escaping @Sendable (_ text: String, _ room: Int, _ member: Int) -> Void
    ) async throws -> Task<Void, any Error> {
        let joined = Counter()
        let sockets = Task {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (index, room) in rooms.enumerated() {
                    for member in 0..<members {
                        let socket = BenchSocket(
                            url: BenchSocket.url(gateway(node(index, member)), token: user(index, member).token), rooms: [room],
                            outbox: member == 0 ? outboxes[index] : nil,
                            onJoined: { joined.add() },
                            onEvent: { text in onEvent(text, index, member) }
                        )
                        group.addTask { try await socket.run(logger: logger) }
                    }
                }
                try await group.waitForAll()
            }
        }
        let connectStart = ContinuousClock.now
        let socketCount = rooms.count * members
        try await Self.wait(for: joined, toReach: socketCount, within: .seconds(120), "sockets joined")
        print("connected and joined \(socketCount) sockets in \(ContinuousClock.now - connectStart)")
        return sockets
    }

    /// Waits until `counter` reaches `target`.
    /// - Throws: when it does not within `limit`, naming `what`.
    static func wait(for counter: Counter, toReach target: Int, within limit: Duration, _ what: String) async throws {
        let start = ContinuousClock.now
        while counter.value < target {
            if ContinuousClock.now - start > limit { throw BenchError("only \(counter.value) of \(target) \(what) within \(limit)") }
            try await Task.sleep(for: .milliseconds(20))
        }
    }
}

/// A shared count that sockets bump from any thread.
final class Counter: Sendable {
    private let atomic = Atomic<Int>(0)
    var value: Int { atomic.load(ordering: .relaxed) }
    func add(_ amount: Int = 1) { atomic.add(amount, ordering: .relaxed) }
}

extension Duration {
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
