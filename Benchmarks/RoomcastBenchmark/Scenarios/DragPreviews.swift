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
        sockets.cancel()

        // The sender's own socket gets no preview back.
        return BenchReport.fanout(
            "drag-preview", title: "drag previews", unit: "preview", options: options, rooms: rooms.count, recipients: members - 1,
            result: recorder.summary(), delivered: delivered.value, outcome: outcome
        )
    }
}
