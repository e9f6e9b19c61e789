import ArgumentParser
import Foundation
import RoomcastServer

/// `roomcast config`: what the settings' declarations produce, for the docs and the sample file.
struct ConfigCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "config",
        abstract: "Print the configuration reference or a sample settings file.",
        subcommands: [ConfigReferenceCommand.self, ConfigSampleCommand.self]
    )
}

/// `roomcast config reference`.
struct ConfigReferenceCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reference",
        abstract: "Print every setting as Markdown: key, environment variable, flag, default, values, meaning.",
        discussion: "docs/operations/configuration.md is this output: \(GatewaySettings.referenceCommand)"
    )

    func run() {
        FileHandle.standardOutput.write(Data(GatewaySettings.referenceMarkdown().utf8))
    }
}

/// `roomcast config sample`.
struct ConfigSampleCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sample",
        abstract: "Print a YAML settings file with every key at its default, each explained in a comment.",
        discussion: "config/roomcast.yaml is this output: \(GatewaySettings.sampleCommand)"
    )

    func run() {
        FileHandle.standardOutput.write(Data(GatewaySettings.sampleYAML().utf8))
    }
}
