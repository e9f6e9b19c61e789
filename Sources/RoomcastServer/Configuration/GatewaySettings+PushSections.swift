// The settings of notifications and push delivery, declared once (see GatewaySettings+Sections.swift).

extension GatewaySettings {
    static let notificationsSection = Section(
        "notifications", title: "Notifications",
        "Each user's notifications, and the endpoint backend services create them with.",
        [
            .integer("kept_per_user", .at(\.notifications.keptPerUser), in: 1...100_000, "Notifications kept per user; the oldest go first."),
            .text(
                "service_key", .at(optional: \.notifications.serviceKey), allowed: "16 bytes or more", example: "replace-with-16-or-more-random-bytes",
                secret: true, whenUnset: "none; the endpoint is off",
                """
                The key backend services send as `X-Roomcast-Service-Key` to `POST /api/internal/notifications`. \
                Prefer `ROOMCAST_NOTIFICATIONS_SERVICE_KEY` to the file.
                """,
                parse: { (text) throws(Setting.Refusal) in
                    guard !text.isEmpty else { return nil }
                    // A secret: the error names its length, never its value.
                    guard text.utf8.count >= 16 else { throw Setting.Refusal("must be at least 16 bytes (it has \(text.utf8.count))") }
                    return text
                }
            ),
        ]
    )

    static let apns = Section(
        "apns", title: "APNs",
        optional: true, requiredTogether: ["key_path", "key_id", "team_id", "topic"],
        """
        Push through Apple's APNs with token-based authentication, for `ios` push tokens. The four credentials go \
        together; without them `ios` push jobs wait in the `push:{outbox}` stream \
        (`redis-cli XRANGE 'push:{outbox}' - +`). The key is read, and the endpoint checked, at start-up.
        """,
        [
            .text(
                "key_path", apnsCredential(\.keyPath), allowed: "a file path", example: "/etc/roomcast/AuthKey_ABC123DEFG.p8",
                whenUnset: "none; APNs is off", "Path of the `.p8` signing key."
            ),
            .text("key_id", apnsCredential(\.keyID), allowed: "text", example: "ABC123DEFG", whenUnset: "none", "The key's id (the JWT `kid`)."),
            .text(
                "team_id", apnsCredential(\.teamID), allowed: "text", example: "DEF123GHIJ", whenUnset: "none",
                "The Apple developer team id (the JWT `iss`)."
            ),
            .text("topic", apnsCredential(\.topic), allowed: "text", example: "com.example.rooms", whenUnset: "none", "The app's bundle id (`apns-topic`)."),
            .text(
                "endpoint", .at(\.notifications.apns, \.endpoint, defaults: apnsDefaults), allowed: "`production`, `sandbox`, or a URL",
                example: "sandbox", "Apple's production or sandbox service, or a URL: `http://` is HTTP/2 without TLS, for local tests."
            ),
            .duration(
                "request_timeout_ms", .at(\.notifications.apns, \.requestTimeout, defaults: apnsDefaults), .milliseconds, in: 100...600_000,
                "Deadline of one push request, connecting included."
            ),
        ]
    )

    static let fcm = Section(
        "fcm", title: "FCM",
        optional: true,
        """
        Push through Firebase Cloud Messaging (HTTP v1), for `fcm` push tokens. A service account's key file turns it \
        on; without one `fcm` push jobs wait in the `push:{outbox}:fcm` stream. The key file is read, and the URLs \
        checked, at start-up.
        """,
        [
            .text(
                "service_account_path",
                Field(
                    get: { $0.notifications.fcm?.serviceAccountPath },
                    set: { settings, path in
                        if settings.notifications.fcm == nil {
                            settings.notifications.fcm = FCMSettings(serviceAccountPath: path)
                        } else {
                            settings.notifications.fcm?.serviceAccountPath = path
                        }
                    }
                ),
                allowed: "a file path", example: "/etc/roomcast/firebase-adminsdk.json", whenUnset: "none; FCM is off",
                "A Firebase service account's JSON key file (`client_email`, `private_key`, `project_id`, `token_uri`)."
            ),
            .text(
                "endpoint", .at(\.notifications.fcm, \.endpoint, defaults: fcmDefaults), allowed: "a URL", example: "http://127.0.0.1:4431",
                "Where `messages:send` goes: Google's FCM, or a URL (`http://` is HTTP/2 without TLS, for local tests)."
            ),
            .text(
                "token_uri",
                Field(get: { $0.notifications.fcm?.tokenURI }, set: { $0.notifications.fcm?.tokenURI = $1 }),
                allowed: "a URL with a path", example: "https://oauth2.googleapis.com/token",
                whenUnset: "the key file's `token_uri` (Google's: `https://oauth2.googleapis.com/token`)",
                "Where access tokens are obtained."
            ),
            .duration(
                "request_timeout_ms", .at(\.notifications.fcm, \.requestTimeout, defaults: fcmDefaults), .milliseconds, in: 100...600_000,
                "Deadline of one push request, the token exchange and connecting included."
            ),
        ]
    )

    static let push = Section(
        "push", title: "Push delivery",
        "How the push workers read the outboxes and retry failed sends, and how many devices a user keeps.",
        [
            .integer(
                "max_attempts", .at(\.notifications.push.maxAttempts), in: 1...100,
                "Sends of one job before it goes to the `push:{outbox}:dead` stream."
            ),
            .duration(
                "retry_delay_ms", .at(\.notifications.push.retryDelay), .milliseconds, in: 10...3_600_000,
                "Wait after a job's first failed send; it doubles with each further attempt, up to `push.max_retry_delay_ms`."
            ),
            .duration(
                "max_retry_delay_ms", .at(\.notifications.push.maxRetryDelay), .milliseconds, in: 10...86_400_000,
                "The longest wait between two attempts."
            ),
            .duration(
                "poll_interval_ms", .at(\.notifications.push.pollInterval), .milliseconds, in: 10...60_000,
                "How often an idle worker looks for new jobs."
            ),
            .integer("batch_size", .at(\.notifications.push.batchSize), in: 1...1_000, "Jobs one worker sends at once."),
            .integer(
                "max_devices_per_user", .at(\.notifications.push.maxDevicesPerUser), in: 1...1_000,
                "Devices (push tokens) a user keeps; registering one more drops the least recently registered."
            ),
        ]
    )

    /// APNs settings before any credential is read: where the defaults of its other fields come from.
    private static let apnsDefaults = APNsSettings(keyPath: "", keyID: "", teamID: "", topic: "")
    private static let fcmDefaults = FCMSettings(serviceAccountPath: "")

    /// One of the four APNs credentials: the first one read turns APNs on (the section requires
    /// all four together, so none is left empty).
    private static func apnsCredential(_ path: any WritableKeyPath<APNsSettings, String> & Sendable) -> Field<String> {
        Field(
            get: { $0.notifications.apns?[keyPath: path] },
            set: { settings, value in
                var apns = settings.notifications.apns ?? apnsDefaults
                apns[keyPath: path] = value
                settings.notifications.apns = apns
            }
        )
    }
}
