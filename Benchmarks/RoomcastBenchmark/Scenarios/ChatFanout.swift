import Foundation

/// `chat`: `rooms` rooms of `members` users each, members spread over the nodes (one socket per
/// member and room); the first member of each room sends `message:send` at `rate` per second.
/// Every member's socket receives each `message:new`; those on another node than the sender
/// measure send → receive.
enum ChatFanout {
    static func run(_ context: BenchContext) async throws -> BenchReport {
        let options = context.options
        let members = options.members
        let setupStart = ContinuousClock.now
        // The same users in every room: a user has one socket per room.
        let users = try await context.registerUsers(members, prefix: "m")
        let apis = context.apis
        let rooms = try await BenchContext.parallel(options.rooms, width: 16) { index in
            try await apis[index % apis.count].createRoom(by: users[0], with: Array(users.dropFirst()))
        }
        print("set up \(rooms.count) rooms of \(members) members in \(ContinuousClock.now - setupStart)")

        let delivered = Counter()
        let recorder = LatencyRecorder(rooms: rooms.count) { text in
            LatencyRecorder.number(after: #""text":""#, in: text)
        }
        // Member 0 publishes from node 0; members on the other nodes measure.
        let nodes = options.gateways.count
        let streams = rooms.map { _ in AsyncStream.makeStream(of: String.self) }
        let sockets = try await context.roomSockets(
            rooms: rooms, members: members, outboxes: streams.map(\.stream), user: { _, member in users[member] }, node: { _, member in member % nodes }
        ) { text, room, member in
            guard text.hasPrefix(#"42["message:new""#) else { return }
            delivered.add()
            if member % nodes != 0 || nodes == 1 { recorder.received(text, room: room) }
        }

        let outcome = try await PacedSenders(context: context, recorder: recorder, outboxes: streams.map(\.continuation)).run { index, sequence in
            // The text is the sequence number, which receivers read back.
            #"42["message:send",{"roomId":"\#(rooms[index])","text":"\#(sequence)"}]"#
        }
        sockets.cancel()

        return BenchReport.fanout(
            "chat-fanout", title: "chat fan-out", unit: "message", options: options, rooms: rooms.count, recipients: members,
            result: recorder.summary(), delivered: delivered.value, outcome: outcome
        )
    }
}
