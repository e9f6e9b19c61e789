import ArgumentParser
import RoomcastCore

/// `roomcast inspect room <roomId>`.
struct InspectRoomCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "room",
        abstract: "A room: participants, elements in z-order with hearts, unseen counts, presence, latest stream offsets."
    )

    @Argument(help: "The room's id.")
    var roomID: String

    @OptionGroup var options: InspectOptions

    func run() async throws {
        let text = roomID
        try await options.run({ inspector throws(RoomcastError) in
            guard let id = RoomID(text) else { throw RoomcastError(.notFound, "no room with id '\(text)'") }
            return try await inspector.room(id)
        }, text: \.text)
    }
}
