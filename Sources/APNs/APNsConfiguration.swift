/// Where to send pushes and as whom.
public struct APNsConfiguration: Sendable {
    /// Apple's production or sandbox service, or a local test server.
    public var endpoint: APNsEndpoint
    /// The app's bundle id, sent as `apns-topic`.
    public var topic: String
    /// The Apple developer team id, the provider token's `iss`.
    public var teamID: String
    /// The id of the signing key, the provider token's `kid`.
    public var keyID: String
    /// The `.p8` key that signs provider tokens.
    public var signingKey: APNsSigningKey
    /// How long one `send` may take, connecting included.
    public var requestTimeout: Duration

    /// Creates a configuration.
    public init(
        endpoint: APNsEndpoint,
        topic: String,
        teamID: String,
        keyID: String,
        signingKey: APNsSigningKey,
        requestTimeout: Duration = .seconds(10)
    ) {
        self.endpoint = endpoint
        self.topic = topic
        self.teamID = teamID
        self.keyID = keyID
        self.signingKey = signingKey
        self.requestTimeout = requestTimeout
    }
}
