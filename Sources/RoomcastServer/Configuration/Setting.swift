extension GatewaySettings {
    /// One setting, declared once: its key, what it means, the values it takes, the flag that sets
    /// it, and the field of ``GatewaySettings`` it fills. The reader (``GatewaySettings/init(reader:)``),
    /// the YAML sample (`roomcast config sample`) and the reference (`roomcast config reference`)
    /// are all made from these declarations, listed in ``GatewaySettings/sections``.
    ///
    /// A setting's default is the initial value of its field: the declaration reads it from
    /// there (``defaultValue``), so it is written once.
    public struct Setting: Sendable {
        /// The key within its section: `pool_size`.
        public let name: String
        /// The whole key, as written in YAML with dots: `redis.pool_size` (set by its section).
        public internal(set) var key: String
        /// What it does, for operators: one paragraph of Markdown.
        public let meaning: String
        /// The values it takes, in Markdown: `` `1`–`64` ``, `` `on`, `off` ``.
        public let allowed: String
        /// The unit of its value (`ms`, `bytes`), if it has one.
        public let unit: String?
        /// The whole numbers it takes, for a number or a duration.
        public let range: ClosedRange<Int>?
        /// The names it takes, for a choice or a boolean.
        public let choices: [String]
        /// The `roomcast serve` flag that also sets it, without dashes (`redis-url`).
        public let flag: String?
        /// Never logged or shown: read as a secret.
        public let isSecret: Bool
        /// What having no value means, in Markdown, for a setting without a default.
        public let whenUnset: String?
        /// A value to show for a setting that has no default, or is text: the sample shows it
        /// commented out, and tests set it.
        public let example: String?
        /// Why a retired key is refused; `nil` for a setting in use.
        public let retirement: String?
        /// Written in YAML as a string (quoted when it must be), not as a number or boolean.
        let isText: Bool
        /// Parses the value's text and stores it.
        let read: @Sendable (String, inout GatewaySettings) throws(Refusal) -> Void
        /// The value held in `settings`, as it would be written; `nil` when unset.
        let render: @Sendable (_ settings: GatewaySettings) -> String?

        /// The environment variable that sets it: `ROOMCAST_REDIS_POOL_SIZE`.
        public var environmentVariable: String { GatewaySettings.environmentName(of: key) }

        /// The default as it would be written; `nil` when the setting has none (see ``whenUnset``).
        public var defaultValue: String? { render(GatewaySettings()) }

        /// The value `settings` holds, as it would be written; `nil` when unset. Secrets are never
        /// shown: a secret text shows its length only, `redis.url` no credentials.
        public func value(in settings: GatewaySettings) -> String? { render(settings) }

        /// Why a value was refused; the reader adds the key.
        struct Refusal: Error {
            let reason: String
            init(_ reason: String) { self.reason = reason }
        }

        /// Any setting: how its text becomes a value, and how a value is written back.
        static func value<Value>(
            _ name: String,
            _ field: Field<Value>,
            allowed: String,
            unit: String? = nil,
            range: ClosedRange<Int>? = nil,
            choices: [String] = [],
            flag: String? = nil,
            secret: Bool = false,
            whenUnset: String? = nil,
            example: String? = nil,
            isText: Bool,
            _ meaning: String,
            parse: @escaping @Sendable (String) throws(Refusal) -> Value?,
            render: @escaping @Sendable (Value) -> String
        ) -> Setting {
            Setting(
                name: name, key: name, meaning: meaning, allowed: allowed, unit: unit, range: range, choices: choices, flag: flag, isSecret: secret,
                whenUnset: whenUnset, example: example, retirement: nil, isText: isText,
                read: { (text, settings) throws(Refusal) in
                    if let value = try parse(text) { field.set(&settings, value) }
                },
                render: { settings in field.get(settings).map(render) }
            )
        }

        /// A whole number in `range`.
        static func integer(
            _ name: String, _ field: Field<Int>, in range: ClosedRange<Int>, unit: String? = nil, flag: String? = nil, _ meaning: String
        ) -> Setting {
            value(
                name, field, allowed: "`\(range.lowerBound)`–`\(range.upperBound)`", unit: unit, range: range, flag: flag, isText: false, meaning,
                parse: { (text) throws(Refusal) in try wholeNumber(text, in: range) },
                render: { String($0) }
            )
        }

        /// A duration written as a whole number of `unit`s in `range`; the key ends with the unit
        /// (`_ms`, `_seconds`, `_us`).
        static func duration(
            _ name: String, _ field: Field<Duration>, _ unit: TimeUnit, in range: ClosedRange<Int>, _ meaning: String
        ) -> Setting {
            value(
                name, field, allowed: "`\(range.lowerBound)`–`\(range.upperBound)`", unit: unit.symbol, range: range, isText: false, meaning,
                parse: { (text) throws(Refusal) in unit.duration(try wholeNumber(text, in: range)) },
                render: { String(unit.count(in: $0)) }
            )
        }

        /// One of a few names, in any case; `aliases` are accepted too but not shown.
        static func choice<Value: Equatable & Sendable>(
            _ name: String, _ field: Field<Value>, _ choices: [(name: String, value: Value)], aliases: [(name: String, value: Value)] = [],
            flag: String? = nil, _ meaning: String
        ) -> Setting {
            let names = choices.map(\.name)
            return value(
                name, field, allowed: names.map { "`\($0)`" }.joined(separator: ", "), choices: names, flag: flag, isText: true, meaning,
                parse: { (text) throws(Refusal) in
                    guard let match = (choices + aliases).first(where: { $0.name == text.lowercased() }) else {
                        throw Refusal("'\(text)' is not one of \(names.joined(separator: ", "))")
                    }
                    return match.value
                },
                render: { current in choices.first { $0.value == current }?.name ?? "" }
            )
        }

        /// `true` or `false`, in any case.
        static func boolean(_ name: String, _ field: Field<Bool>, _ meaning: String) -> Setting {
            value(
                name, field, allowed: "`true`, `false`", choices: ["true", "false"], isText: false, meaning,
                parse: { (text) throws(Refusal) in
                    guard let value = Bool(text.lowercased()) else { throw Refusal("'\(text)' is not true or false") }
                    return value
                },
                render: { String($0) }
            )
        }

        /// Text, checked by `parse`; by default an empty text leaves the setting unset.
        static func text(
            _ name: String,
            _ field: Field<String>,
            allowed: String,
            example: String,
            flag: String? = nil,
            secret: Bool = false,
            whenUnset: String? = nil,
            _ meaning: String,
            parse: @escaping @Sendable (String) throws(Refusal) -> String? = { $0.isEmpty ? nil : $0 }
        ) -> Setting {
            value(
                name, field, allowed: allowed, flag: flag, secret: secret, whenUnset: whenUnset, example: example, isText: true, meaning,
                parse: parse, render: { secret ? "(secret, \($0.utf8.count) bytes)" : $0 }
            )
        }

        /// A key no longer read: any value stops start-up with `reason`, so that a deployment
        /// still setting it learns what to set instead.
        static func retired(_ name: String, reason: String, _ meaning: String) -> Setting {
            Setting(
                name: name, key: name, meaning: meaning, allowed: "", unit: nil, range: nil, choices: [], flag: nil, isSecret: false, whenUnset: nil,
                example: nil, retirement: reason, isText: true,
                read: { (_, _) throws(Refusal) in throw Refusal(reason) },
                render: { _ in nil }
            )
        }

        private static func wholeNumber(_ text: String, in range: ClosedRange<Int>) throws(Refusal) -> Int {
            guard let value = Int(text), range.contains(value) else {
                throw Refusal("'\(text)' is not a whole number in \(range.lowerBound)...\(range.upperBound)")
            }
            return value
        }
    }

    /// Settings under one key of the YAML file (`redis:`), with a short introduction for the
    /// reference and the sample.
    public struct Section: Sendable {
        /// The YAML key the settings sit under (`redis`); `nil` for top-level keys.
        public let name: String?
        /// The reference's heading: `Redis`.
        public let title: String
        /// What the section is about, in Markdown: shown above its settings.
        public let introduction: String
        /// Off unless set: the sample shows the whole section commented out.
        public let isOptional: Bool
        /// Keys of this section that are given together or not at all (APNs credentials).
        public let requiredTogether: [String]
        /// The settings, in the order they are read.
        public let settings: [Setting]
        /// Runs after the section is read: adjusts values that depend on one another.
        let finish: (@Sendable (inout GatewaySettings) -> Void)?

        init(
            _ name: String?,
            title: String,
            optional: Bool = false,
            requiredTogether: [String] = [],
            _ introduction: String,
            _ settings: [Setting],
            finish: (@Sendable (inout GatewaySettings) -> Void)? = nil
        ) {
            self.name = name
            self.title = title
            self.introduction = introduction
            self.isOptional = optional
            self.requiredTogether = requiredTogether
            self.finish = finish
            self.settings = settings.map { setting in
                var keyed = setting
                keyed.key = name.map { "\($0).\(setting.name)" } ?? setting.name
                return keyed
            }
        }
    }

    /// Where a setting's value lives in ``GatewaySettings``: how it is read back and stored.
    struct Field<Value>: Sendable {
        let get: @Sendable (GatewaySettings) -> Value?
        let set: @Sendable (inout GatewaySettings, Value) -> Void

        /// A field of the settings.
        static func at(_ path: any WritableKeyPath<GatewaySettings, Value> & Sendable) -> Field {
            Field(get: { $0[keyPath: path] }, set: { $0[keyPath: path] = $1 })
        }

        /// An optional field: unset by default.
        static func at(optional path: any WritableKeyPath<GatewaySettings, Value?> & Sendable) -> Field {
            Field(get: { $0[keyPath: path] }, set: { $0[keyPath: path] = $1 })
        }

        /// A field of a part that is off until other settings turn it on (APNs, FCM): stored only
        /// once the part exists, its default read from `defaults`.
        static func at<Part: Sendable>(
            _ part: any WritableKeyPath<GatewaySettings, Part?> & Sendable, _ path: any WritableKeyPath<Part, Value> & Sendable, defaults: Part
        ) -> Field {
            Field(get: { ($0[keyPath: part] ?? defaults)[keyPath: path] }, set: { $0[keyPath: part]?[keyPath: path] = $1 })
        }
    }

    /// The unit a duration setting is written in.
    enum TimeUnit: Sendable {
        case seconds, milliseconds, microseconds

        var symbol: String {
            switch self {
            case .seconds: "s"
            case .milliseconds: "ms"
            case .microseconds: "µs"
            }
        }

        func duration(_ count: Int) -> Duration {
            switch self {
            case .seconds: .seconds(count)
            case .milliseconds: .milliseconds(count)
            case .microseconds: .microseconds(count)
            }
        }

        /// Whole units in `duration`, rounded down.
        func count(in duration: Duration) -> Int {
            let (seconds, attoseconds) = duration.components
            let perSecond: Int64 =
                switch self {
                case .seconds: 1
                case .milliseconds: 1_000
                case .microseconds: 1_000_000
                }
            return Int(seconds * perSecond + attoseconds / (1_000_000_000_000_000_000 / perSecond))
        }
    }
}

extension GatewaySettings.Section {
    /// Refuses a section given part of a set of keys that go together (``requiredTogether``),
    /// naming the first one missing.
    /// - Parameter given: the names of the section's settings given a value that is not empty.
    func checkRequiredTogether(_ given: [String]) throws(ConfigurationError) {
        guard requiredTogether.contains(where: given.contains) else { return }
        // Half a set of credentials is a mistake, not a wish to leave the feature off.
        if let missing = requiredTogether.first(where: { !given.contains($0) }) {
            let names = requiredTogether.joined(separator: ", ")
            throw ConfigurationError(
                key: name.map { "\($0).\(missing)" } ?? missing, reason: "is required with the other \(name ?? "") settings (\(names))"
            )
        }
    }
}
