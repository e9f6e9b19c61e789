/// A setting that stops start-up, named so that the operator knows what to fix.
public struct ConfigurationError: Error, CustomStringConvertible, Sendable {
    /// The setting's key as written in `config/roomcast.yaml` (`redis.url`, `port` ...), or
    /// `config` for the file itself.
    public let key: String
    /// Why the value was refused.
    public let reason: String

    /// Creates an error for `key`.
    public init(key: String, reason: String) {
        self.key = key
        self.reason = reason
    }

    public var description: String {
        "invalid setting '\(key)' (\(GatewaySettings.environmentName(of: key)) / config file): \(reason)"
    }
}
