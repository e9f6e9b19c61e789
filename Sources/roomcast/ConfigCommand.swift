import ArgumentParser
import Foundation
import RoomcastServer

/// `roomcast config reference|sample`: what the settings' declarations produce, for the docs and
/// the sample file.
struct ConfigCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "config",
        abstract: "Print the configuration reference or a sample settings file, made from the settings' declarations.",
        discussion: """
            docs/operations/configuration.md is `roomcast config reference`, config/roomcast.yaml is \
            `roomcast config sample`.
            """
    )

    /// What to print.
    enum Document: String, ExpressibleByArgument, CaseIterable {
        /// Every setting as Markdown: key, environment variable, flag, default, values, meaning.
        case reference
        /// A YAML settings file with every key at its default, each explained in a comment.
        case sample
    }

    @Argument(
        help: """
            reference: every setting as Markdown (key, environment variable, flag, default, values, meaning); \
            sample: a YAML file with every key at its default, each explained.
            """
    )
    var document: Document

    func run() {
        let text =
            switch document {
            case .reference: GatewaySettings.referenceMarkdown()
            case .sample: GatewaySettings.sampleYAML()
            }
        FileHandle.standardOutput.write(Data(text.utf8))
    }
}
