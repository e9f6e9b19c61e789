import ArgumentParser
import RoomcastServer

// A `roomcast serve` flag takes its name and help from the setting it sets (its declaration's
// `flag`), so that the help, the reference and the reader agree.

extension NameSpecification {
    /// The long name the declaration of `key` gives its flag.
    static func setting(_ key: String) -> NameSpecification {
        guard let flag = GatewaySettings.setting(key)?.flag else { preconditionFailure("the setting '\(key)' declares no flag") }
        return .customLong(flag)
    }
}

extension ArgumentHelp {
    /// What the flag for `key` does, its values, environment variable and default.
    static func setting(_ key: String) -> ArgumentHelp {
        ArgumentHelp(GatewaySettings.flagHelp(for: key))
    }
}
