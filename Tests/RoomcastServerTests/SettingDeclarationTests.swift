import Foundation
import RoomcastServer
import RoomcastTestSupport
import Testing

/// The settings' declarations (`GatewaySettings.sections`): well formed, each one read, its
/// values checked, and the files made from them (the reference and the YAML sample) current.
@Suite("Setting declarations: the reader, the reference and the sample")
struct SettingDeclarationTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let settings = GatewaySettings.sections.flatMap(\.settings).filter { $0.retirement == nil }

    static func load(_ environment: [String: String]) async throws -> GatewaySettings {
        try await GatewaySettings.load(configFile: "/nonexistent/roomcast.yaml", requireFile: false, overrides: [:], environment: environment)
    }

    /// What turns the optional sections on (APNs credentials, an FCM key file): their settings
    /// without a default, at their examples. The other settings of those sections apply only then.
    static let partsOn: [String: String] = Dictionary(
        uniqueKeysWithValues: GatewaySettings.sections.filter(\.isOptional).flatMap(\.settings)
            .filter { $0.retirement == nil && $0.defaultValue == nil }
            .map { ($0.environmentVariable, $0.example ?? "") }
    )

    /// Loads the settings with the optional sections on and `variable` set to `value`.
    static func load(_ variable: String, _ value: String) async throws -> GatewaySettings {
        try await load(partsOn.merging([variable: value]) { $1 })
    }

    /// Compares a checked-in file with what the declarations make, naming the first line that differs.
    static func expectCurrent(_ path: String, _ generated: String, regeneratedBy command: String) throws {
        let checkedIn = try String(contentsOf: repository.appendingPathComponent(path), encoding: .utf8)
        guard checkedIn != generated else { return }
        let old = checkedIn.split(separator: "\n", omittingEmptySubsequences: false)
        let new = generated.split(separator: "\n", omittingEmptySubsequences: false)
        let line = (0..<min(old.count, new.count)).first { old[$0] != new[$0] } ?? min(old.count, new.count)
        let was = line < old.count ? String(old[line]) : "(end of file)"
        let now = line < new.count ? String(new[line]) : "(end of file)"
        Issue.record(
            """
            \(path) is out of date with the settings' declarations; regenerate it with `\(command)`. \
            Line \(line + 1) is \(was.debugDescription), the declarations make \(now.debugDescription).
            """
        )
    }

    @Test("docs/operations/configuration.md is what `roomcast config reference` prints")
    func referenceIsCurrent() throws {
        try Self.expectCurrent("docs/operations/configuration.md", GatewaySettings.referenceMarkdown(), regeneratedBy: GatewaySettings.referenceCommand)
    }

    @Test("config/roomcast.yaml is what `roomcast config sample` prints")
    func sampleIsCurrent() throws {
        try Self.expectCurrent("config/roomcast.yaml", GatewaySettings.sampleYAML(), regeneratedBy: GatewaySettings.sampleCommand)
    }

    @Test("every setting README.md and docs/ name is a declared one")
    func documentedKeysExist() throws {
        let sections = Set(GatewaySettings.sections.compactMap(\.name))
        let declared = Set(GatewaySettings.sections.flatMap(\.settings).map(\.key))
        // Code that looks like a key: Lua's redis.call, the Socket.IO client's package.
        let notSettings: Set = ["redis.call", "socket.io"]
        var files = ["README.md"]
        let docs = Self.repository.appendingPathComponent("docs")
        for case let url as URL in FileManager.default.enumerator(at: docs, includingPropertiesForKeys: nil) ?? .init()
        where url.pathExtension == "md" {
            files.append(String(url.path.dropFirst(Self.repository.path.count + 1)))
        }
        #expect(files.count > 5)
        for file in files {
            let text = try String(contentsOf: Self.repository.appendingPathComponent(file), encoding: .utf8)
            for match in text.matches(of: /`([a-z]+)\.([a-z_]+)`/) where sections.contains(String(match.1)) {
                let key = "\(match.1).\(match.2)"
                #expect(declared.contains(key) || notSettings.contains(key), "\(file) names `\(key)`, which is not a setting")
            }
        }
    }

    @Test("the sample reads back as the defaults, and names every key")
    func sampleIsTheDefaults() async throws {
        let path = Self.repository.appendingPathComponent("config/roomcast.yaml").path
        let fromSample = try await GatewaySettings.load(configFile: path, requireFile: true, overrides: [:], environment: [:])
        let defaults = GatewaySettings()
        let sample = GatewaySettings.sampleYAML()
        for setting in Self.settings {
            #expect(setting.value(in: fromSample) == setting.value(in: defaults), "\(setting.key)")
            #expect(sample.contains("\(setting.name): "), "\(setting.key) is missing from the sample")
        }
    }

    @Test("keys, environment variables and flags are unique; every setting has a meaning, a unit in its name, and a default or an example")
    func declarationsAreWellFormed() {
        let all = GatewaySettings.sections.flatMap(\.settings)
        #expect(Set(all.map(\.key)).count == all.count)
        #expect(Set(all.map(\.environmentVariable)).count == all.count)
        let flags = all.compactMap(\.flag)
        #expect(Set(flags).count == flags.count)
        #expect(Set(GatewaySettings.sections.map(\.title)).count == GatewaySettings.sections.count)
        for setting in all {
            #expect(setting.name.allSatisfy { $0.isLowercase || $0.isNumber || $0 == "_" }, "\(setting.key)")
            #expect(setting.meaning.hasSuffix("."), "\(setting.key): a meaning is sentences")
            #expect(setting.meaning.firstMatch(of: /#\d/) == nil, "\(setting.key): no issue numbers in a meaning")
            guard setting.retirement == nil else { continue }
            #expect(setting.defaultValue != nil || (setting.whenUnset != nil && setting.example != nil), "\(setting.key)")
            switch setting.unit {
            case "ms": #expect(setting.name.hasSuffix("_ms"), "\(setting.key)")
            case "s": #expect(setting.name.hasSuffix("_seconds"), "\(setting.key)")
            case "µs": #expect(setting.name.hasSuffix("_us"), "\(setting.key)")
            default: #expect(!setting.name.hasSuffix("_ms") && !setting.name.hasSuffix("_us"), "\(setting.key) is a duration")
            }
        }
        for section in GatewaySettings.sections {
            #expect(!section.introduction.isEmpty && section.introduction.firstMatch(of: /#\d/) == nil, "\(section.title)")
            let names = section.settings.map(\.name)
            #expect(section.requiredTogether.allSatisfy(names.contains), "\(section.title)")
        }
        #expect(GatewaySettings.referenceMarkdown().firstMatch(of: /#\d/) == nil)
        #expect(GatewaySettings.sampleYAML().firstMatch(of: /#\d/) == nil)
    }

    /// A value that is not the default: a bound of its range, another choice, or its example.
    static func otherValue(_ setting: GatewaySettings.Setting) throws -> String {
        if let range = setting.range {
            return String(setting.defaultValue == String(range.lowerBound) ? range.upperBound : range.lowerBound)
        }
        if let choice = setting.choices.first(where: { $0 != setting.defaultValue }) { return choice }
        return try #require(setting.example, "\(setting.key) needs an example")
    }

    @Test("every declared setting reaches its own field: set to another value, it changes what is read, and nothing else")
    func everySettingIsRead() async throws {
        let base = try await Self.load(Self.partsOn)
        for setting in Self.settings {
            var value = try Self.otherValue(setting)
            if Self.partsOn[setting.environmentVariable] == value { value += "-other" }
            let changed = try await Self.load(setting.environmentVariable, value)
            for other in Self.settings {
                let moved = other.value(in: changed) != other.value(in: base)
                #expect(moved == (other.key == setting.key), "\(setting.environmentVariable)=\(value): \(other.key) \(moved ? "changed" : "did not change")")
            }
        }
    }

    @Test("a secret's value is never shown: a secret text shows its length, the Redis URL no credentials")
    func secretsAreNotShown() async throws {
        let secrets = Self.settings.filter(\.isSecret)
        #expect(Set(secrets.map(\.key)) == ["redis.url", "jwt.secret", "notifications.service_key"])
        let password = "hunter2-but-longer-than-thirty-two-bytes"
        let loaded = try await Self.load([
            "ROOMCAST_REDIS_URL": "redis://admin:\(password)@redis.internal:6380", "ROOMCAST_JWT_SECRET": password,
            "ROOMCAST_NOTIFICATIONS_SERVICE_KEY": password,
        ])
        for setting in secrets {
            let shown = try #require(setting.value(in: loaded), "\(setting.key)")
            #expect(!shown.contains("hunter2") && !shown.contains("admin"), "\(setting.key) shows \(shown)")
        }
    }

    @Test("each setting's default, written out, reads back as the default")
    func defaultsReadBack() async throws {
        for setting in Self.settings {
            guard let value = setting.defaultValue else { continue }
            let loaded = try await Self.load(setting.environmentVariable, value)
            #expect(setting.value(in: loaded) == value, "\(setting.key)")
        }
    }

    @Test("every number takes its bounds and refuses what is past them, or not a number, naming its key")
    func rangesAreEnforced() async throws {
        for setting in Self.settings {
            guard let range = setting.range else { continue }
            for bound in [range.lowerBound, range.upperBound] {
                let loaded = try await Self.load(setting.environmentVariable, String(bound))
                if setting.key != "socket.inbound_queue_bytes" {  // raised to fit the largest packet
                    #expect(setting.value(in: loaded) == String(bound), "\(setting.key)")
                }
            }
            for refused in [String(range.lowerBound - 1), String(range.upperBound + 1), "abc", "1.5", ""] {
                let error = await #expect(throws: ConfigurationError.self, "\(setting.key)=\(refused)") {
                    try await Self.load(setting.environmentVariable, refused)
                }
                #expect(error?.key == setting.key)
                #expect(error?.description.contains(setting.environmentVariable) == true)
            }
        }
    }

    @Test("every choice takes its names in any case and refuses another, naming its key")
    func choicesAreEnforced() async throws {
        for setting in Self.settings where !setting.choices.isEmpty {
            for choice in setting.choices {
                #expect(setting.value(in: try await Self.load(setting.environmentVariable, choice.uppercased())) == choice, "\(setting.key)")
            }
            let error = await #expect(throws: ConfigurationError.self) { try await Self.load(setting.environmentVariable, "sometimes") }
            #expect(error?.key == setting.key)
        }
    }

    @Test("a flag for a key that is not a setting is refused")
    func unknownOverride() async throws {
        let error = await #expect(throws: ConfigurationError.self) {
            try await GatewaySettings.load(configFile: "/nonexistent.yaml", requireFile: false, overrides: ["redis.urls": "redis://x"], environment: [:])
        }
        #expect(error?.key == "redis.urls")
    }

    @Test("`roomcast config reference` and `roomcast config sample` print the declarations' reference and sample")
    func configCommands() async throws {
        let reference = try await GatewayProcess.runToExit(arguments: ["config", "reference"])
        #expect(reference.status == 0)
        #expect(reference.output == GatewaySettings.referenceMarkdown())
        let sample = try await GatewayProcess.runToExit(arguments: ["config", "sample"])
        #expect(sample.status == 0)
        #expect(sample.output == GatewaySettings.sampleYAML())
    }

    @Test("`roomcast serve --help` has every declared flag, with its environment variable")
    func serveFlags() async throws {
        let help = try await GatewayProcess.runToExit(arguments: ["serve", "--help"])
        #expect(help.status == 0)
        let flagged = Self.settings.filter { $0.flag != nil }
        for setting in flagged {
            #expect(help.output.contains("--\(setting.flag ?? "")"), "\(setting.key)")
            #expect(help.output.contains(setting.environmentVariable), "\(setting.key)")
        }
        #expect(help.output.contains("redis-cluster://"))
    }
}
