import Foundation

/// `canvas`: `rooms` two-person rooms, the two users on different nodes; the first user of every
/// room sends `element:update` moves at `rate` per second, the second measures send → receive.
enum CanvasDrag {
    static func run(_ context: BenchContext) async throws -> BenchReport {
        let options = context.options
        let setupStart = ContinuousClock.now
        let users = try await context.registerUsers(options.rooms * 2, prefix: "c")
        let apis = context.apis
        let rooms = try await BenchContext.parallel(options.rooms, width: 32) { index in
            let (sender, receiver) = (users[2 * index], users[2 * index + 1])
            let api = apis[index % apis.count]
            let room = try await api.createRoom(by: sender, with: [receiver])
            return (room: room, element: try await api.createElement(in: room, by: sender))
        }
        print("set up \(rooms.count) rooms in \(ContinuousClock.now - setupStart)")

        let joined = Counter()
        let recorder = LatencyRecorder(rooms: rooms.count) { text in
            guard text.hasPrefix(#"42["element:updated""#) else { return nil }
            return LatencyRecorder.number(after: #""positionY":"#, in: text)
        }
        let streams = rooms.map { _ in AsyncStream.makeStream(of: String.self) }
        let sockets = Task {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (index, room) in rooms.enumerated() {
                    let sender = BenchSocket(
                        url: BenchSocket.url(context.gateway(index), token: users[2 * index].token), rooms: [room.room],
                        outbox: streams[index].stream, onJoined: { joined.add() }
                    )
                    let receiver = BenchSocket(
                        url: BenchSocket.url(context.gateway(index + 1), token: users[2 * index + 1].token), rooms: [room.room],
                        outbox: nil, onJoined: { joined.add() }, onEvent: { recorder.received($0, room: index) }
                    )
                    group.addTask { try await sender.run(logger: context.logger) }
                    group.addTask { try await receiver.run(logger: context.logger) }
                }
                try await group.waitForAll()
            }
        }
        let connectStart = ContinuousClock.now
        try await BenchContext.wait(for: joined, toReach: rooms.count * 2, within: .seconds(120), "sockets joined")
        print("connected and joined \(rooms.count * 2) sockets in \(ContinuousClock.now - connectStart)")

        let outcome = try await PacedSenders(context: context, recorder: recorder, outboxes: streams.map(\.continuation)).run { index, sequence in
            let room = rooms[index]
            return #"42["element:update",{"roomId":"\#(room.room)","elementId":"\#(room.element)","updates":{"positionX":\#(sequence % 1000),"positionY":\#(sequence)}}]"#
        }
        let driveTime = outcome.seconds
        sockets.cancel()

        let result = recorder.summary()
        var report = BenchReport(scenario: "canvas-drag")
        report.add("rooms", rooms.count)
        report.add("rate_per_room", options.rate, digits: 1)
        report.add("seconds", driveTime)
        report.add("sent", result.sent)
        report.add("received", result.received)
        report.add("lost", result.sent - result.received)
        report.add("updates_per_second", Double(result.received) / driveTime, digits: 0)
        report.line("canvas drag: \(rooms.count) rooms × \(options.rate)/s for \(driveTime.formatted(1)) s over \(options.gateways.count) node(s)")
        report.line("delivered \(result.received) of \(result.sent) updates (\((Double(result.received) / driveTime).formatted(0))/s), lost \(result.sent - result.received)")
        report.addLatency(result)
        report.addCPU(outcome, sent: result.sent, per: "update", delivered: result.received, digits: 1)
        return report
    }
}
