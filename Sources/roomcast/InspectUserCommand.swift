import ArgumentParser
import RoomcastCore

/// `roomcast inspect user <userId|username>`.
struct InspectUserCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "user",
        abstract: "A user: rooms with unseen counts, notification badge, connected sockets, push devices."
    )

    @Argument(help: "The user's id or username (an id is tried first).")
    var user: String

    @OptionGroup var options: InspectOptions

    func run() async throws {
        let reference = user
        try await options.run({ inspector throws(RoomcastError) in try await inspector.user(reference) }, text: \.text)
    }
}
