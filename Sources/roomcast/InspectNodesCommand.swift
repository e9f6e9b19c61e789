import ArgumentParser
import RoomcastCore

/// `roomcast inspect nodes`.
struct InspectNodesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "nodes",
        abstract: "The live gateway nodes of the node registry, with their addresses and socket counts, and the expired nodes still to be reaped."
    )

    @OptionGroup var options: InspectOptions

    func run() async throws {
        try await options.run({ inspector throws(RoomcastError) in try await inspector.nodes() }, text: \.text)
    }
}
