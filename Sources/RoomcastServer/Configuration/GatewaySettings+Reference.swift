import Foundation

// What the declarations (``GatewaySettings/sections``) produce besides the reader: the Markdown
// reference (`roomcast config reference`, docs/operations/configuration.md), the YAML sample
// (`roomcast config sample`, config/roomcast.yaml) and the help of `roomcast serve`'s flags.

extension GatewaySettings {
    /// The command that writes the reference, for the notes in both files and for tests.
    public static let referenceCommand = "swift run -q roomcast config reference > docs/operations/configuration.md"
    /// The command that writes the sample.
    public static let sampleCommand = "swift run -q roomcast config sample > config/roomcast.yaml"

    /// The configuration reference in Markdown: how settings are read, then every section's
    /// settings in a table (key, environment variable, flag, default, values, meaning).
    public static func referenceMarkdown() -> String {
        var lines = [
            "# Configuration",
            "",
            "<!-- Generated from the settings' declarations (Sources/RoomcastServer/Configuration): edit those,",
            "     then run `\(referenceCommand)`. -->",
            "",
            "Every setting of a gateway node: its key, environment variable, flag, default, the values it",
            "takes and what it does. A node reads its settings from three sources; for each key the later",
            "one wins:",
            "",
            "1. the YAML file `config/roomcast.yaml`, or the file `--config FILE` names. The repository's",
            "   `config/roomcast.yaml` lists every key at its default (`roomcast config sample` prints it);",
            "2. environment variables: `ROOMCAST_` and the key in capitals, dots as underscores",
            "   (`redis.url` → `ROOMCAST_REDIS_URL`);",
            "3. the flags of `roomcast serve`: " + flagged.map { "`--\($0.flag ?? "")`" }.joined(separator: ", ") + ".",
            "",
            "A value that is malformed or out of range stops start-up with a message naming the setting:",
            "",
            "```",
            exampleRefusal,
            "```",
            "",
            "Durations are whole numbers in the unit their key ends with (`_ms`, `_seconds`, `_us`).",
            "",
            "Sections:",
            "",
        ]
        lines += sections.map { "- [\($0.title)](#\(anchor($0.title))): " + $0.keysSummary }
        for section in sections {
            lines += ["", "## \(section.title)", "", section.introduction]
            if !section.requiredTogether.isEmpty {
                let keys = section.requiredTogether.map { "`\(section.name.map { "\($0)." } ?? "")\($0)`" }
                lines += ["", "\(sentenceList(keys)) are required together."]
            }
            lines += [
                "",
                "| Key | Environment variable | Flag | Default | Values | Meaning |",
                "|-----|----------------------|------|---------|--------|---------|",
            ]
            for setting in section.settings where setting.retirement == nil {
                let cells = [
                    "`\(setting.key)`",
                    "`\(setting.environmentVariable)`",
                    setting.flag.map { "`--\($0)`" } ?? "",
                    setting.defaultValue.map { "`\(setting.yaml($0))`" + (setting.readable($0).map { " (\($0))" } ?? "") }
                        ?? setting.whenUnset ?? "none",
                    [setting.allowed, setting.unit].compactMap { $0 }.joined(separator: " "),
                    setting.meaning,
                ]
                lines.append("| " + cells.map { $0.replacingOccurrences(of: "|", with: "\\|") }.joined(separator: " | ") + " |")
            }
        }
        let retired = sections.flatMap(\.settings).filter { $0.retirement != nil }
        if !retired.isEmpty {
            lines += [
                "",
                "## Retired keys",
                "",
                "Setting one of these stops start-up with a message that says what replaced it.",
                "",
                "| Key | Environment variable | Replaced by |",
                "|-----|----------------------|-------------|",
            ]
            lines += retired.map { "| `\($0.key)` | `\($0.environmentVariable)` | \($0.meaning) |" }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// `config/roomcast.yaml`: every section and key, each with its meaning as a comment, set to
    /// its default; keys without one, and optional sections, commented out with an example.
    public static func sampleYAML() -> String {
        var lines = [
            "# Settings of a Roomcast gateway node: every key, at its default.",
            "#",
        ]
        lines += comment(
            """
            Environment variables override this file (ROOMCAST_ and the key in capitals, dots as underscores: \
            redis.url -> ROOMCAST_REDIS_URL); the flags of `roomcast serve` override both. \
            docs/operations/configuration.md says more about each key. This file is generated from the settings' \
            declarations: `\(sampleCommand)`.
            """,
            indent: ""
        )
        for section in sections {
            lines += ["", "# \(section.title)"]
            lines += comment(section.introduction, indent: "")
            if !section.requiredTogether.isEmpty {
                lines += comment(sentenceList(section.requiredTogether) + " are required together.", indent: "")
            }
            let off = section.isOptional ? "# " : ""
            var indent = ""
            if let name = section.name {
                lines.append("\(off)\(name):")
                indent = "  "
            }
            for setting in section.settings where setting.retirement == nil {
                let values = plain([setting.allowed, setting.unit].compactMap { $0 }.joined(separator: " "))
                var text = setting.meaning
                if values != "text" { text += " Values: \(values)" + (values.hasSuffix(".") ? "" : ".") }
                if setting.defaultValue == nil, let unset = setting.whenUnset, unset != "none" { text += " Default: \(plain(unset))." }
                lines += comment(text, indent: off + indent)
                if let value = setting.defaultValue, !section.isOptional {
                    lines.append("\(indent)\(setting.name): \(setting.yaml(value))")
                } else if let value = setting.defaultValue ?? setting.example {
                    // An optional section is commented out whole; elsewhere only the key is.
                    lines.append((section.isOptional ? "# \(indent)" : "\(indent)# ") + "\(setting.name): \(setting.yaml(value))")
                }
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The help of the `roomcast serve` flag that sets `key`: what it does, its values, its
    /// environment variable and its default.
    public static func flagHelp(for key: String) -> String {
        guard let setting = setting(key) else { return key }
        let firstSentence = setting.meaning.split(separator: ". ", maxSplits: 1).first.map(String.init) ?? setting.meaning
        let summary = plain(firstSentence.hasSuffix(".") ? String(firstSentence.dropLast()) : firstSentence)
        let values = plain([setting.allowed, setting.unit].compactMap { $0 }.joined(separator: " "))
        let fallback = setting.defaultValue.map { "default \($0)" } ?? setting.whenUnset.map { "unset: \(plain($0))" }
        return "\(summary) (\([values, setting.environmentVariable, fallback].compactMap { $0 }.joined(separator: "; ")))."
    }

    /// The settings `roomcast serve` has a flag for.
    static var flagged: [Setting] { sections.flatMap(\.settings).filter { $0.flag != nil } }

    /// What start-up says about `ROOMCAST_PORT=abc`, as the reference's example.
    private static var exampleRefusal: String {
        var settings = GatewaySettings()
        guard let port = setting("port") else { return "" }
        do throws(Setting.Refusal) {
            try port.read("abc", &settings)
            return ""
        } catch {
            return ConfigurationError(key: port.key, reason: error.reason).description
        }
    }

    /// GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens.
    private static func anchor(_ heading: String) -> String {
        String(heading.lowercased().compactMap { $0 == " " ? "-" : ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") ? $0 : nil })
    }

    /// `a`, `b` and `c`.
    private static func sentenceList(_ items: [String]) -> String {
        items.count < 2 ? items.joined() : items.dropLast().joined(separator: ", ") + " and " + (items.last ?? "")
    }

    /// Markdown without its code marks, for comments and help.
    private static func plain(_ markdown: String) -> String {
        markdown.replacingOccurrences(of: "`", with: "")
    }

    /// `text` as comment lines of at most 100 columns after `indent`.
    private static func comment(_ text: String, indent: String) -> [String] {
        let width = 100 - indent.count - 2
        var lines: [String] = []
        var line = ""
        for word in text.split(separator: " ") {
            if !line.isEmpty, line.count + 1 + word.count > width {
                lines.append(line)
                line = ""
            }
            line += (line.isEmpty ? "" : " ") + word
        }
        if !line.isEmpty { lines.append(line) }
        return lines.map { "\(indent)# \($0)" }
    }
}

extension GatewaySettings.Section {
    /// The keys a section holds, for the reference's contents: `redis.*`, or the keys themselves
    /// at the top level.
    fileprivate var keysSummary: String {
        if let name { return "`\(name).*`" }
        return settings.map { "`\($0.key)`" }.joined(separator: ", ")
    }
}

extension GatewaySettings.Setting {
    /// A number of milliseconds, seconds or bytes in the largest unit that holds it exactly
    /// (`604800` seconds: `7 days`); `nil` when that says nothing more.
    func readable(_ value: String) -> String? {
        guard let number = Int(value), number > 0 else { return nil }
        let units: [(size: Int, name: String)]
        let count: Int
        switch unit {
        case "ms", "s":
            count = unit == "s" ? number * 1000 : number
            units = [(86_400_000, "day"), (3_600_000, "h"), (60_000, "min"), (1000, "s")]
        case "bytes":
            count = number
            units = [(1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")]
        default:
            return nil
        }
        guard let (size, name) = units.first(where: { count >= $0.size && count % $0.size == 0 }) else { return nil }
        let amount = count / size
        let text = "\(amount) \(name)" + (name == "day" && amount != 1 ? "s" : "")
        return unit == "s" && name == "s" ? nil : text
    }

    /// `value` as a YAML scalar: numbers and booleans plain, text plain when YAML reads it back
    /// as the same text, else quoted.
    func yaml(_ value: String) -> String {
        guard isText else { return value }
        let reserved: Set = ["y", "yes", "n", "no", "on", "off", "true", "false", "null", "~"]
        let plainSafe = value.unicodeScalars.allSatisfy { $0.properties.isAlphabetic || ("0"..."9").contains($0) || "_.:/@,+-".unicodeScalars.contains($0) }
        if let first = value.first, first.isLetter || first.isNumber || first == "/", plainSafe, !reserved.contains(value.lowercased()),
            Double(value) == nil, !value.contains(": ")
        {
            return value
        }
        return "\"" + value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }
}
