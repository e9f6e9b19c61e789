public import Configuration
import SystemPackage

extension GatewaySettings {
    /// Reads and validates every declared setting (``sections``); a malformed value fails
    /// naming its key.
    ///
    /// Values are read as text and parsed by their declarations: swift-configuration's typed
    /// accessors fall back to the default on a malformed value, which would hide `ROOMCAST_PORT=abc`.
    public init(reader: ConfigReader) throws(ConfigurationError) {
        self.init()
        for section in Self.sections {
            // Each section reads from its own scope, as `redis:` scopes `url` in the YAML file.
            let scope = section.name.map { reader.scoped(to: ConfigKey([$0])) } ?? reader
            var given: [(setting: Setting, text: String)] = []
            for setting in section.settings {
                if let text = scope.string(forKey: ConfigKey([setting.name]), isSecret: setting.isSecret) {
                    given.append((setting, text))
                }
            }
            try section.checkRequiredTogether(given.filter { !$0.text.isEmpty }.map(\.setting.name))
            for (setting, text) in given {
                do throws(Setting.Refusal) {
                    try setting.read(text, &self)
                } catch {
                    throw ConfigurationError(key: setting.key, reason: error.reason)
                }
            }
            section.finish?(&self)
        }
    }

    /// Checks what serving needs beyond valid values: a JWT secret, and Redis settings that work
    /// together (TLS files readable, see ``redisClientConfiguration()``).
    public func validateForServing() throws(ConfigurationError) {
        guard jwtSecret != nil else {
            throw ConfigurationError(key: "jwt.secret", reason: "is required to sign and verify tokens (32 bytes or more)")
        }
        _ = try redisClientConfiguration()
    }

    /// Loads settings from their three sources, highest precedence first: `overrides` (flags),
    /// `environment` (`ROOMCAST_*`), then the YAML file.
    /// - Parameters:
    ///   - configFile: the YAML file; a missing file is an error only when `requireFile` is true.
    ///   - overrides: values from command-line flags, by key.
    ///   - environment: the process environment.
    public static func load(
        configFile: String,
        requireFile: Bool,
        overrides: [String: String],
        environment: [String: String]
    ) async throws -> GatewaySettings {
        var flagValues: [AbsoluteConfigKey: ConfigValue] = [:]
        for (key, value) in overrides {
            guard let setting = Self.setting(key), setting.retirement == nil else {
                throw ConfigurationError(key: key, reason: "is not a setting")
            }
            flagValues[AbsoluteConfigKey(ConfigKey(key))] = ConfigValue(.string(value), isSecret: setting.isSecret)
        }
        let flags = InMemoryProvider(name: "flags", values: flagValues)
        let variables = EnvironmentVariablesProvider(environmentVariables: environment).prefixKeys(with: ConfigKey(["roomcast"]))
        let file: FileProvider<YAMLSnapshot>
        do {
            file = try await FileProvider<YAMLSnapshot>(filePath: FilePath(configFile), allowMissing: !requireFile)
        } catch {
            throw ConfigurationError(key: "config", reason: "cannot read \(configFile): \(error)")
        }
        return try GatewaySettings(reader: ConfigReader(providers: [flags, variables, file]))
    }
}
