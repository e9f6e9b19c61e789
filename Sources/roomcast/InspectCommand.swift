import ArgumentParser

/// `roomcast inspect`: reads rooms, users and nodes straight from Redis, for operators; no
/// gateway needs to run.
struct InspectCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "inspect",
        abstract: "Show what Redis holds about a room, a user or the gateway nodes.",
        discussion: """
            Reads Redis directly with the same settings as `serve` (config file, ROOMCAST_REDIS_URL, \
            --redis-url). Exit status: 0 shown, 1 no such room or user, 2 Redis unreachable or failing, \
            64 bad arguments or settings.
            """,
        subcommands: [InspectRoomCommand.self, InspectUserCommand.self, InspectNodesCommand.self]
    )
}
