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

        let delivered = Counter()
        let recorder = LatencyRecorder(rooms: rooms.count) { text in
            LatencyRecorder.number(after: #""positionY":"#, in: text)
        }
        let streams = rooms.map { _ in AsyncStream.makeStream(of: String.self) }
        let sockets = try await context.roomSockets(
            rooms: rooms.map(\.room), members: members, outboxes: streams.map(\.stream), user: { _, member in users[member] }, node: { room, member in room + member }
        ) { text, room, _ in
            guard text.hasPrefix(#"42["element:drag""#) else { return }
            delivered.add()
            recorder.received(text, room: room)
        }

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
