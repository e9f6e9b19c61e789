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

        let recorder = LatencyRecorder(rooms: rooms.count) { text in
            guard text.hasPrefix(#"42["element:updated""#) else { return nil }
            return LatencyRecorder.number(after: #""positionY":"#, in: text)
        }
        let streams = rooms.map { _ in AsyncStream.makeStream(of: String.self) }
        // The room's two users on neighbouring nodes: the first moves, the second measures.
        let sockets = try await context.roomSockets(
            rooms: rooms.map(\.room), members: 2, outboxes: streams.map(\.stream), user: { room, member in users[2 * room + member] },
            node: { room, member in room + member }
        ) { text, room, member in
            if member == 1 { recorder.received(text, room: room) }
        }

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
