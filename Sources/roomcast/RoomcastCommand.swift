import ArgumentParser
import RoomcastServer

/// `roomcast`: the gateway's command line (started by `Main`).
struct RoomcastCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "roomcast",
        abstract: "Roomcast: a Redis-backed realtime gateway (Socket.IO v5 over WebSocket, REST).",
        version: RoomcastBuild.version,
        subcommands: [ServeCommand.self, InspectCommand.self, ConfigCommand.self]
    )
}
