/// Notifications, the service endpoint that creates them, and push delivery through APNs.
public struct NotificationSettings: Sendable {
    /// Notifications kept per user; the oldest go first.
    public var keptPerUser: Int = 500
    /// The key backend services send as `X-Roomcast-Service-Key` to `POST /api/internal/notifications`;
    /// without one the endpoint is off.
    public var serviceKey: String?
    /// How to reach APNs; without it push jobs wait in the outbox.
    public var apns: APNsSettings?
    /// Retries of failed pushes.
    public var push = PushSettings()

    /// Defaults: no service key, no APNs.
    public init() {}
}

/// The app's APNs credentials (token-based: a `.p8` key).
public struct APNsSettings: Sendable {
    /// Path of the `.p8` signing key.
    public var keyPath: String
    /// The key's id (the JWT `kid`).
    public var keyID: String
    /// The Apple developer team id (the JWT `iss`).
    public var teamID: String
    /// The app's bundle id (`apns-topic`).
    public var topic: String
    /// `production`, `sandbox`, or a URL (`http://127.0.0.1:PORT` for a local HTTP/2 server).
    public var endpoint: String = "production"
    /// Deadline of one push request, connecting included.
    public var requestTimeout: Duration = .seconds(10)

    /// Creates settings.
    public init(keyPath: String, keyID: String, teamID: String, topic: String) {
        self.keyPath = keyPath
        self.keyID = keyID
        self.teamID = teamID
        self.topic = topic
    }
}

/// How the push worker reads the outbox and retries.
public struct PushSettings: Sendable {
    /// Sends of one job before it goes to the dead-letter stream.
    public var maxAttempts: Int = 8
    /// Wait after a job's first failed send; it doubles with each further attempt.
    public var retryDelay: Duration = .seconds(2)
    /// The longest wait between two attempts.
    public var maxRetryDelay: Duration = .seconds(300)
    /// How often an idle worker looks for new jobs.
    public var pollInterval: Duration = .milliseconds(250)
    /// Jobs one worker sends at once.
    public var batchSize: Int = 32

    /// Defaults.
    public init() {}
}
