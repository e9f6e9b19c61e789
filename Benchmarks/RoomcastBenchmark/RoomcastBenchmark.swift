import Foundation
import Logging
import RedisClient
import Synchronization

/// `roomcast-bench`: end-to-end canvas drag across gateway nodes.
///
/// Sets up `rooms` two-person rooms over REST, connects each room's two users to different
/// nodes, then the first user of every room sends `element:update` moves at `rate` per second;
/// the second user's socket measures send → receive latency. Prints one JSON line and a summary,
/// with Redis CPU per update (from `INFO cpu`) and, given their pids, gateway CPU per delivery.
///
/// Usage: roomcast-bench --gateway http://127.0.0.1:8081 --gateway http://127.0.0.1:8082
///        --redis-url redis://127.0.0.1:6379 [--rooms 1000] [--rate 5] [--seconds 10] [--pids 1,2]
@main
struct RoomcastBenchmark {
    static func main() async throws {
        let options = Options(CommandLine.arguments.dropFirst())
        guard !options.gateways.isEmpty else {
            print("usage: roomcast-bench --gateway URL [--gateway URL] --redis-url URL [--rooms N] [--rate R] [--seconds S] [--pids P,P]")
            return
        }
        let logger = {
            var logger = Logger(label: "bench")
            logger.logLevel = .error
            return logger
        }()
        let apis = options.gateways.map { BenchAPI(base: $0) }
        let run = "b\(UInt32.random(in: 0...UInt32.max))"

        // MARK: Setup over REST
        let setupStart = ContinuousClock.now
        let rooms = try await withThrowingTaskGroup(of: BenchRoom.self) { group in
            var rooms: [BenchRoom] = []
            var next = 0
            func add(_ index: Int) {
                group.addTask {
                    let api = apis[index % apis.count]
                    let sender = try await api.register("\(run)a\(index)")
                    let receiver = try await api.register("\(run)z\(index)")
                    let room = try await api.createRoom(by: sender, with: receiver)
                    let element = try await api.createElement(in: room, by: sender)
                    return BenchRoom(index: index, id: room, element: element, sender: sender, receiver: receiver)
                }
            }
            while next < min(32, options.rooms) { add(next); next += 1 }
            while let room = try await group.next() {
                rooms.append(room)
                if next < options.rooms { add(next); next += 1 }
            }
            return rooms
        }
        print("set up \(rooms.count) rooms in \(ContinuousClock.now - setupStart)")

        // MARK: Sockets
        let joined = Atomic<Int>(0)
        let recorder = LatencyRecorder(rooms: rooms.count)
        let streams = rooms.map { _ in AsyncStream.makeStream(of: String.self) }
        let outboxes = streams.map(\.continuation)
        let gateways = options.gateways
        let sockets = Task {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (position, room) in rooms.enumerated() {
                    let senderNode = gateways[room.index % gateways.count]
                    let receiverNode = gateways[(room.index + 1) % gateways.count]
                    let outbox = streams[position].stream
                    let sender = BenchSocket(
                        url: Self.socketURL(senderNode, room.sender.token), roomId: room.id, outbox: outbox,
                        onJoined: { joined.add(1, ordering: .relaxed) }, onEvent: { _ in }
                    )
                    let receiver = BenchSocket(
                        url: Self.socketURL(receiverNode, room.receiver.token), roomId: room.id, outbox: nil,
                        onJoined: { joined.add(1, ordering: .relaxed) },
                        onEvent: { text in recorder.received(text, room: room.index) }
                    )
                    group.addTask { try await sender.run(logger: logger) }
                    group.addTask { try await receiver.run(logger: logger) }
                }
                try await group.waitForAll()
            }
        }
        let connectStart = ContinuousClock.now
        while joined.load(ordering: .relaxed) < rooms.count * 2 {
            if ContinuousClock.now - connectStart > .seconds(60) { throw BenchError("only \(joined.load(ordering: .relaxed)) sockets joined in 60 s") }
            try await Task.sleep(for: .milliseconds(50))
        }
        print("connected and joined \(rooms.count * 2) sockets in \(ContinuousClock.now - connectStart)")

        // MARK: Drive
        let redis = try await RedisProbe(url: options.redisURL)
        let redisBefore = try await redis.cpuSeconds()
        let gatewaysBefore = options.pids.map(ProcessCPU.seconds)
        let interval = Duration.nanoseconds(Int64(1e9 / options.rate))
        let driveStart = ContinuousClock.now
        let deadline = driveStart + .seconds(options.seconds)
        await withTaskGroup(of: Void.self) { group in
            for (position, room) in rooms.enumerated() {
                let outbox = outboxes[position]
                group.addTask {
                    // Spread the senders over the first interval so ticks do not all coincide.
                    try? await Task.sleep(for: interval * Double.random(in: 0..<1))
                    var sequence = 0
                    var next = ContinuousClock.now
                    while next < deadline {
                        recorder.sent(room: room.index, sequence: sequence)
                        outbox.yield(
                            #"42["element:update",{"roomId":"\#(room.id)","elementId":"\#(room.element)","updates":{"positionX":\#(sequence % 1000),"positionY":\#(sequence)}}]"#
                        )
                        sequence += 1
                        next += interval
                        try? await Task.sleep(until: next)
                    }
                }
            }
        }
        let driveTime = ContinuousClock.now - driveStart
        try await Task.sleep(for: .seconds(2))
        let redisAfter = try await redis.cpuSeconds()
        let gatewaysAfter = options.pids.map(ProcessCPU.seconds)
        for outbox in outboxes { outbox.finish() }
        sockets.cancel()

        // MARK: Report
        let result = recorder.summary(seconds: driveTime.seconds)
        let redisPerUpdate = result.sent > 0 ? (redisAfter - redisBefore) / Double(result.sent) * 1e6 : 0
        let gatewayCPU = zip(gatewaysBefore, gatewaysAfter).map { $1 - $0 }.reduce(0, +)
        let gatewayPerDelivery = result.received > 0 ? gatewayCPU / Double(result.received) * 1e6 : 0
        let json = """
            {"scenario":"canvas-drag","rooms":\(rooms.count),"rate_per_room":\(options.rate),"seconds":\(String(format: "%.2f", driveTime.seconds)),\
            "sent":\(result.sent),"received":\(result.received),"lost":\(result.sent - result.received),\
            "updates_per_second":\(String(format: "%.0f", Double(result.received) / driveTime.seconds)),\
            "latency_ms":{"p50":\(Self.ms(result.p50)),"p90":\(Self.ms(result.p90)),"p99":\(Self.ms(result.p99)),"max":\(Self.ms(result.max))},\
            "redis_cpu_us_per_update":\(String(format: "%.1f", redisPerUpdate)),\
            "gateway_cpu_us_per_delivery":\(options.pids.isEmpty ? "null" : String(format: "%.1f", gatewayPerDelivery))}
            """
        print(json)
        print("""
            canvas drag: \(rooms.count) rooms × \(options.rate)/s for \(String(format: "%.1f", driveTime.seconds)) s over \(options.gateways.count) node(s)
              delivered \(result.received) of \(result.sent) updates (\(String(format: "%.0f", Double(result.received) / driveTime.seconds))/s), lost \(result.sent - result.received)
              latency p50 \(Self.ms(result.p50)) ms, p90 \(Self.ms(result.p90)) ms, p99 \(Self.ms(result.p99)) ms, max \(Self.ms(result.max)) ms
              Redis CPU \(String(format: "%.1f", redisPerUpdate)) µs per update\(options.pids.isEmpty ? "" : ", gateways \(String(format: "%.1f", gatewayPerDelivery)) µs CPU per delivery")
            """)
    }

    static func socketURL(_ base: String, _ token: String) -> String {
        base.replacingOccurrences(of: "http://", with: "ws://") + "/socket.io/?EIO=4&transport=websocket&token=\(token)"
    }

    static func ms(_ seconds: Double) -> String { String(format: "%.2f", seconds * 1000) }
}

struct BenchRoom: Sendable {
    let index: Int
    let id: String
    let element: String
    let sender: BenchAPI.Session
    let receiver: BenchAPI.Session
}

struct Options {
    var gateways: [String] = []
    var redisURL = "redis://127.0.0.1:6379"
    var rooms = 1000
    var rate = 5.0
    var seconds = 10
    var pids: [Int32] = []

    init(_ arguments: ArraySlice<String>) {
        var iterator = arguments.makeIterator()
        while let flag = iterator.next() {
            let value = iterator.next() ?? ""
            switch flag {
            case "--gateway": gateways.append(value)
            case "--redis-url": redisURL = value
            case "--rooms": rooms = Int(value) ?? rooms
            case "--rate": rate = Double(value) ?? rate
            case "--seconds": seconds = Int(value) ?? seconds
            case "--pids": pids = value.split(separator: ",").compactMap { Int32($0) }
            default: print("unknown option \(flag)")
            }
        }
    }
}

extension Duration {
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
