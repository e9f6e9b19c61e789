import Foundation

/// `preview`: `rooms` rooms of `members` users, members spread over the nodes; the first member of
/// each room drags an element, sending `element:drag` at `rate` per second (at most
/// `canvas.preview_hz`, so none is coalesced away); every other member's socket receives each
/// preview and measures send → receive. Nothing is stored: Redis only relays.
enum DragPreviews {
    static func run(_ context: BenchContext) async throws -> BenchReport {
        let options = context.options
        let members = options.members
        let setupStart = ContinuousClock.now
        let users = try await context.registerUsers(members, prefix: "p")
        let apis = context.apis
        let rooms = try await BenchContext.parallel(options.rooms, width: 16) { index in
            let api = apis[index % apis.count]
            let room = try await api.createRoom(by: users[0], with: Array(users.dropFirst()))
            return (room: room, element: try await api.createElement(in: room, by: users[0]))
        }
        print("set up \(rooms.count) rooms of \(members) members in \(ContinuousClock.now - setupStart)")

        let joined = Counter()
        let delivered = Counter()
        let recorder = LatencyRecorder(rooms: rooms.count) { text in
            LatencyRecorder.number(after: #""positionY":"#, in: text)
        }
        let streams = rooms.map { _ in AsyncStream.makeStream(of: String.self) }
        let sockets = Task {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (index, room) in rooms.enumerated() {
                    for member in 0..<members {
                        let socket = BenchSocket(
                            url: BenchSocket.url(context.gateway(member + index), token: users[member].token), rooms: [room.room],
                            outbox: member == 0 ? streams[index].stream : nil,
                            onJoined: { joined.add() },
                            onEvent: { text in
                                guard text.hasPrefix(#"42["element:drag""#) else { return }
                                delivered.add()
                                recorder.received(text, room: index)
                            }
                        )
                        group.addTask { try await socket.run(logger: context.logger) }
                    }
                }
                try await group.waitForAll()
            }
        }
        let connectStart = ContinuousClock.now
        let socketCount = rooms.count * members
        try await BenchContext.wait(for: joined, toReach: socketCount, within: .seconds(120), "sockets joined")
        print("connected and joined \(socketCount) sockets in \(ContinuousClock.now - connectStart)")

        let outcome = try await PacedSenders(context: context, recorder: recorder, outboxes: streams.map(\.continuation)).run { index, sequence in
            let room = rooms[index]
            return #"42["element:drag",{"roomId":"\#(room.room)","elementId":"\#(room.element)","positionX":\#(sequence % 1000),"positionY":\#(sequence)}]"#
        }
        let driveTime = outcome.seconds
        sockets.cancel()

        let result = recorder.summary()
        let expected = result.sent * (members - 1)
        var report = BenchReport(scenario: "drag-preview")
        report.add("rooms", rooms.count)
        report.add("members", members)
        report.add("rate_per_room", options.rate, digits: 1)
        report.add("seconds", driveTime)
        report.add("sent", result.sent)
        report.add("delivered", delivered.value)
        report.add("lost", expected - delivered.value)
        report.add("delivered_per_second", Double(delivered.value) / driveTime, digits: 0)
        report.line("drag previews: \(rooms.count) rooms × \(members) members, \(options.rate)/s per room for \(driveTime.formatted(1)) s over \(options.gateways.count) node(s)")
        report.line("delivered \(delivered.value) of \(expected) previews (\((Double(delivered.value) / driveTime).formatted(0))/s), lost \(expected - delivered.value)")
        report.addLatency(result)
        report.addCPU(outcome, sent: result.sent, per: "preview", delivered: delivered.value, digits: 2)
        return report
    }
}
