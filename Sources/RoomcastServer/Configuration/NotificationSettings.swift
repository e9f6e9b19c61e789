/// Notifications, the service endpoint that creates them, and push delivery through APNs and FCM.
public struct NotificationSettings: Sendable {
    /// Notifications kept per user; the oldest go first.
    public var keptPerUser: Int = 500
    /// The key backend services send as `X-Roomcast-Service-Key` to `POST /api/internal/notifications`;
    /// without one the endpoint is off.
    public var serviceKey: String?
    /// How to reach APNs; without it `ios` push jobs wait in their outbox.
    public var apns: APNsSettings?
    /// How to reach FCM; without it `fcm` push jobs wait in their outbox.
    public var fcm: FCMSettings?
    /// Retries of failed pushes.
    public var push = PushSettings()

    /// Defaults: no service key, no APNs, no FCM.
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

/// The app's Firebase credentials: a service account's JSON key file.
public struct FCMSettings: Sendable {
    /// Path of the service account's JSON key file (`client_email`, `private_key`, `project_id`, `token_uri`).
    public var serviceAccountPath: String
    /// Where `messages:send` goes: Google's FCM, or a URL (`http://127.0.0.1:PORT` for a local HTTP/2 server).
    public var endpoint: String = "https://fcm.googleapis.com"
    /// Where access tokens are obtained; `nil` for the key file's `token_uri`.
    public var tokenURI: String?
    /// Deadline of one push request, the token exchange and connecting included.
    public var requestTimeout: Duration = .seconds(10)

    /// Creates settings.
    public init(serviceAccountPath: String) {
        self.serviceAccountPath = serviceAccountPath
    }
}

/// How the push workers read the outboxes and retry.
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
    /// Devices a user keeps; registering one more drops the least recently registered.
    public var maxDevicesPerUser: Int = 10

    /// Defaults.
    public init() {}
}
