import Foundation
import RoomcastServer
import RoomcastTestSupport
import Testing

/// The notification settings: `notifications.*`, `apns.*` and `push.*`, read in-process like
/// GatewaySettingsTests does, plus what `roomcast serve` does with unusable APNs credentials.
@Suite("Gateway settings: notifications, APNs and push")
struct NotificationSettingsTests {
    private func load(_ environment: [String: String], file: String = "/nonexistent/roomcast.yaml") async throws -> GatewaySettings {
        try await GatewaySettings.load(configFile: file, requireFile: false, overrides: [:], environment: environment)
    }

    private func withConfigFile<Result>(_ yaml: String, _ body: (String) async throws -> Result) async throws -> Result {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("roomcast-\(UUID().uuidString).yaml").path
        try yaml.write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        return try await body(path)
    }

    /// The four settings that turn APNs on.
    static let apnsEnvironment = [
        "ROOMCAST_APNS_KEY_PATH": "/etc/roomcast/AuthKey.p8",
        "ROOMCAST_APNS_KEY_ID": "ABC123DEFG",
        "ROOMCAST_APNS_TEAM_ID": "DEF123GHIJ",
        "ROOMCAST_APNS_TOPIC": "com.example.rooms",
    ]

    @Test("defaults: 500 kept, no service key, no APNs, push retry defaults")
    func defaults() async throws {
        let settings = try await load([:])
        #expect(settings.notifications.keptPerUser == 500)
        #expect(settings.notifications.serviceKey == nil)
        #expect(settings.notifications.apns == nil)
        let push = settings.notifications.push
        #expect(push.maxAttempts == 8)
        #expect(push.retryDelay == .seconds(2))
        #expect(push.maxRetryDelay == .seconds(300))
        #expect(push.pollInterval == .milliseconds(250))
        #expect(push.batchSize == 32)
        #expect(push.maxDevicesPerUser == 10)
    }

    @Test("every new key is read from the environment")
    func environmentValues() async throws {
        var environment = Self.apnsEnvironment
        environment.merge([
            "ROOMCAST_NOTIFICATIONS_KEPT_PER_USER": "20",
            "ROOMCAST_NOTIFICATIONS_SERVICE_KEY": "0123456789abcdef",
            "ROOMCAST_APNS_ENDPOINT": "http://127.0.0.1:4430",
            "ROOMCAST_APNS_REQUEST_TIMEOUT_MS": "1500",
            "ROOMCAST_PUSH_MAX_ATTEMPTS": "3",
            "ROOMCAST_PUSH_RETRY_DELAY_MS": "100",
            "ROOMCAST_PUSH_MAX_RETRY_DELAY_MS": "5000",
            "ROOMCAST_PUSH_POLL_INTERVAL_MS": "50",
            "ROOMCAST_PUSH_BATCH_SIZE": "7",
            "ROOMCAST_PUSH_MAX_DEVICES_PER_USER": "4",
        ]) { $1 }
        let settings = try await load(environment)
        #expect(settings.notifications.keptPerUser == 20)
        #expect(settings.notifications.serviceKey == "0123456789abcdef")
        let apns = try #require(settings.notifications.apns)
        #expect(apns.keyPath == "/etc/roomcast/AuthKey.p8")
        #expect(apns.keyID == "ABC123DEFG")
        #expect(apns.teamID == "DEF123GHIJ")
        #expect(apns.topic == "com.example.rooms")
        #expect(apns.endpoint == "http://127.0.0.1:4430")
        #expect(apns.requestTimeout == .milliseconds(1500))
        let push = settings.notifications.push
        #expect(push.maxAttempts == 3)
        #expect(push.retryDelay == .milliseconds(100))
        #expect(push.maxRetryDelay == .milliseconds(5000))
        #expect(push.pollInterval == .milliseconds(50))
        #expect(push.batchSize == 7)
        #expect(push.maxDevicesPerUser == 4)
    }

    @Test("the YAML file sets them too, and the environment overrides it; the endpoint defaults to production")
    func fileValues() async throws {
        let yaml = """
            notifications:
              kept_per_user: 42
              service_key: file-service-key-0123
            apns:
              key_path: /keys/AuthKey.p8
              key_id: KEYID12345
              team_id: TEAMID1234
              topic: com.example.file
            push:
              max_attempts: 5
              batch_size: 9
            """
        try await withConfigFile(yaml) { path in
            let fromFile = try await GatewaySettings.load(configFile: path, requireFile: true, overrides: [:], environment: [:])
            #expect(fromFile.notifications.keptPerUser == 42)
            #expect(fromFile.notifications.serviceKey == "file-service-key-0123")
            let apns = try #require(fromFile.notifications.apns)
            #expect(apns.keyPath == "/keys/AuthKey.p8")
            #expect(apns.keyID == "KEYID12345")
            #expect(apns.teamID == "TEAMID1234")
            #expect(apns.topic == "com.example.file")
            #expect(apns.endpoint == "production")
            #expect(apns.requestTimeout == .seconds(10))
            #expect(fromFile.notifications.push.maxAttempts == 5)
            #expect(fromFile.notifications.push.batchSize == 9)
            #expect(fromFile.notifications.push.retryDelay == .seconds(2))

            let overridden = try await GatewaySettings.load(
                configFile: path, requireFile: true, overrides: [:],
                environment: ["ROOMCAST_APNS_TOPIC": "com.example.env", "ROOMCAST_PUSH_MAX_ATTEMPTS": "2", "ROOMCAST_APNS_ENDPOINT": "sandbox"]
            )
            #expect(overridden.notifications.apns?.topic == "com.example.env")
            #expect(overridden.notifications.apns?.keyID == "KEYID12345")
            #expect(overridden.notifications.apns?.endpoint == "sandbox")
            #expect(overridden.notifications.push.maxAttempts == 2)
        }
    }

    @Test("a service key needs 16 bytes; an empty one leaves the endpoint off")
    func serviceKeyLength() async throws {
        #expect(try await load(["ROOMCAST_NOTIFICATIONS_SERVICE_KEY": "0123456789abcdef"]).notifications.serviceKey == "0123456789abcdef")
        #expect(try await load(["ROOMCAST_NOTIFICATIONS_SERVICE_KEY": ""]).notifications.serviceKey == nil)
        do {
            _ = try await load(["ROOMCAST_NOTIFICATIONS_SERVICE_KEY": "0123456789abcde"])
            Issue.record("a 15-byte service key should be refused")
        } catch let error as ConfigurationError {
            #expect(error.key == "notifications.service_key")
            #expect(error.description.contains("ROOMCAST_NOTIFICATIONS_SERVICE_KEY"))
            #expect(error.description.contains("16"))
            // The key is a secret: the error names its length, never its value.
            #expect(!error.description.contains("0123456789abcde"))
        }
    }

    @Test(
        "apns settings are all or none: the error names the missing one",
        arguments: ["apns.key_path", "apns.key_id", "apns.team_id", "apns.topic"]
    )
    func apnsAllOrNone(missing: String) async throws {
        var environment = Self.apnsEnvironment
        environment[GatewaySettings.environmentName(of: missing)] = nil
        do {
            let settings = try await load(environment)
            Issue.record("apns without \(missing) should be refused, got \(String(describing: settings.notifications.apns))")
        } catch let error as ConfigurationError {
            #expect(error.key == missing)
            #expect(error.description.contains(GatewaySettings.environmentName(of: missing)))
        }
    }

    @Test("an empty apns value counts as missing; endpoint and timeout alone do not turn APNs on")
    func apnsEmptyAndExtras() async throws {
        var environment = Self.apnsEnvironment
        environment["ROOMCAST_APNS_TEAM_ID"] = ""
        do {
            _ = try await load(environment)
            Issue.record("an empty apns.team_id should be refused")
        } catch let error as ConfigurationError {
            #expect(error.key == "apns.team_id")
        }
        let extrasOnly = try await load(["ROOMCAST_APNS_ENDPOINT": "sandbox", "ROOMCAST_APNS_REQUEST_TIMEOUT_MS": "2000"])
        #expect(extrasOnly.notifications.apns == nil)
    }

    @Test(
        "a value out of range stops start-up naming its key",
        arguments: [
            ("ROOMCAST_NOTIFICATIONS_KEPT_PER_USER", "0", "notifications.kept_per_user"),
            ("ROOMCAST_NOTIFICATIONS_KEPT_PER_USER", "many", "notifications.kept_per_user"),
            ("ROOMCAST_NOTIFICATIONS_KEPT_PER_USER", "100001", "notifications.kept_per_user"),
            ("ROOMCAST_PUSH_MAX_ATTEMPTS", "0", "push.max_attempts"),
            ("ROOMCAST_PUSH_MAX_ATTEMPTS", "101", "push.max_attempts"),
            ("ROOMCAST_PUSH_MAX_DEVICES_PER_USER", "0", "push.max_devices_per_user"),
            ("ROOMCAST_PUSH_MAX_DEVICES_PER_USER", "many", "push.max_devices_per_user"),
            ("ROOMCAST_PUSH_RETRY_DELAY_MS", "9", "push.retry_delay_ms"),
            ("ROOMCAST_PUSH_RETRY_DELAY_MS", "1.5", "push.retry_delay_ms"),
            ("ROOMCAST_PUSH_MAX_RETRY_DELAY_MS", "9", "push.max_retry_delay_ms"),
            ("ROOMCAST_PUSH_POLL_INTERVAL_MS", "9", "push.poll_interval_ms"),
            ("ROOMCAST_PUSH_POLL_INTERVAL_MS", "60001", "push.poll_interval_ms"),
            ("ROOMCAST_PUSH_BATCH_SIZE", "0", "push.batch_size"),
            ("ROOMCAST_PUSH_BATCH_SIZE", "1001", "push.batch_size"),
            ("ROOMCAST_APNS_REQUEST_TIMEOUT_MS", "99", "apns.request_timeout_ms"),
            ("ROOMCAST_APNS_REQUEST_TIMEOUT_MS", "soon", "apns.request_timeout_ms"),
        ]
    )
    func outOfRange(variable: String, value: String, key: String) async throws {
        // The request timeout is an APNs setting: read with the credentials.
        var environment = key.hasPrefix("apns.") ? Self.apnsEnvironment : [:]
        environment[variable] = value
        do {
            _ = try await load(environment)
            Issue.record("\(variable)=\(value) should be refused")
        } catch let error as ConfigurationError {
            #expect(error.key == key)
            #expect(error.description.contains(variable))
        }
    }

    @Test("range bounds are accepted")
    func bounds() async throws {
        let low = try await load([
            "ROOMCAST_NOTIFICATIONS_KEPT_PER_USER": "1", "ROOMCAST_PUSH_MAX_ATTEMPTS": "1", "ROOMCAST_PUSH_RETRY_DELAY_MS": "10",
            "ROOMCAST_PUSH_MAX_RETRY_DELAY_MS": "10", "ROOMCAST_PUSH_POLL_INTERVAL_MS": "10", "ROOMCAST_PUSH_BATCH_SIZE": "1",
        ])
        #expect(low.notifications.keptPerUser == 1)
        #expect(low.notifications.push.maxAttempts == 1)
        #expect(low.notifications.push.retryDelay == .milliseconds(10))
        #expect(low.notifications.push.pollInterval == .milliseconds(10))
        #expect(low.notifications.push.batchSize == 1)
        let high = try await load([
            "ROOMCAST_NOTIFICATIONS_KEPT_PER_USER": "100000", "ROOMCAST_PUSH_MAX_ATTEMPTS": "100", "ROOMCAST_PUSH_POLL_INTERVAL_MS": "60000",
            "ROOMCAST_PUSH_BATCH_SIZE": "1000",
        ])
        #expect(high.notifications.keptPerUser == 100_000)
        #expect(high.notifications.push.maxAttempts == 100)
        #expect(high.notifications.push.batchSize == 1000)
    }

    @Test("roomcast serve refuses an unreadable APNs key or a bad endpoint, naming the setting")
    func unusableCredentialsStopStartup() async throws {
        var environment = Self.apnsEnvironment
        environment["ROOMCAST_APNS_KEY_PATH"] = "/nonexistent/AuthKey_missing.p8"
        environment["ROOMCAST_REDIS_URL"] = "redis://127.0.0.1:1"
        environment["ROOMCAST_JWT_SECRET"] = GatewayProcess.jwtSecret
        let missingKey = try await GatewayProcess.runToExit(arguments: ["serve", "--port", "0"], environment: environment)
        #expect(missingKey.status != 0)
        #expect(missingKey.output.contains("apns.key_path"), "\(missingKey.output)")
        #expect(!missingKey.output.contains("roomcast ready"))

        let keyPath = FileManager.default.temporaryDirectory.appendingPathComponent("roomcast-apns-\(UUID().uuidString).p8").path
        try APNsTestKey.generate().pem.write(toFile: keyPath, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: keyPath) }
        environment["ROOMCAST_APNS_KEY_PATH"] = keyPath
        environment["ROOMCAST_APNS_ENDPOINT"] = "ftp://apns.example"
        let badEndpoint = try await GatewayProcess.runToExit(arguments: ["serve", "--port", "0"], environment: environment)
        #expect(badEndpoint.status != 0)
        #expect(badEndpoint.output.contains("apns.endpoint"), "\(badEndpoint.output)")
        #expect(!badEndpoint.output.contains("roomcast ready"))
    }

    @Test("fcm settings: the key file turns FCM on; endpoint, token URI and timeout are read with it, alone they do nothing")
    func fcmSettings() async throws {
        #expect(try await load([:]).notifications.fcm == nil)
        let defaults = try #require(try await load(["ROOMCAST_FCM_SERVICE_ACCOUNT_PATH": "/etc/roomcast/firebase.json"]).notifications.fcm)
        #expect(defaults.serviceAccountPath == "/etc/roomcast/firebase.json")
        #expect(defaults.endpoint == "https://fcm.googleapis.com")
        #expect(defaults.tokenURI == nil)
        #expect(defaults.requestTimeout == .seconds(10))
        let set = try #require(
            try await load([
                "ROOMCAST_FCM_SERVICE_ACCOUNT_PATH": "/etc/roomcast/firebase.json", "ROOMCAST_FCM_ENDPOINT": "http://127.0.0.1:4431",
                "ROOMCAST_FCM_TOKEN_URI": "http://127.0.0.1:4431/token", "ROOMCAST_FCM_REQUEST_TIMEOUT_MS": "1500",
            ]).notifications.fcm
        )
        #expect(set.endpoint == "http://127.0.0.1:4431")
        #expect(set.tokenURI == "http://127.0.0.1:4431/token")
        #expect(set.requestTimeout == .milliseconds(1500))
        #expect(try await load(["ROOMCAST_FCM_ENDPOINT": "http://127.0.0.1:4431"]).notifications.fcm == nil)
        do {
            _ = try await load(["ROOMCAST_FCM_SERVICE_ACCOUNT_PATH": "/etc/roomcast/firebase.json", "ROOMCAST_FCM_REQUEST_TIMEOUT_MS": "99"])
            Issue.record("a 99 ms FCM request timeout should be refused")
        } catch let error as ConfigurationError {
            #expect(error.key == "fcm.request_timeout_ms")
            #expect(error.description.contains("ROOMCAST_FCM_REQUEST_TIMEOUT_MS"))
        }
    }

    @Test("roomcast serve refuses an unreadable FCM key file or a bad endpoint, naming the setting and never the key")
    func unusableFCMCredentialsStopStartup() async throws {
        var environment = [
            "ROOMCAST_FCM_SERVICE_ACCOUNT_PATH": "/nonexistent/firebase-adminsdk.json", "ROOMCAST_REDIS_URL": "redis://127.0.0.1:1",
            "ROOMCAST_JWT_SECRET": GatewayProcess.jwtSecret,
        ]
        let missing = try await GatewayProcess.runToExit(arguments: ["serve", "--port", "0"], environment: environment)
        #expect(missing.status != 0)
        #expect(missing.output.contains("fcm.service_account_path"), "\(missing.output)")
        #expect(!missing.output.contains("roomcast ready"))

        let account = try FCMTestAccount.generate()
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("roomcast-fcm-\(UUID().uuidString).json").path
        try account.json(tokenURI: "https://oauth2.googleapis.com/token").write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        environment["ROOMCAST_FCM_SERVICE_ACCOUNT_PATH"] = path
        environment["ROOMCAST_FCM_ENDPOINT"] = "ftp://fcm.example"
        let badEndpoint = try await GatewayProcess.runToExit(arguments: ["serve", "--port", "0"], environment: environment)
        #expect(badEndpoint.status != 0)
        #expect(badEndpoint.output.contains("fcm.endpoint"), "\(badEndpoint.output)")
        #expect(!badEndpoint.output.contains("PRIVATE KEY"))

        environment["ROOMCAST_FCM_ENDPOINT"] = nil
        environment["ROOMCAST_FCM_TOKEN_URI"] = "oauth2.example/token"
        let badTokenURI = try await GatewayProcess.runToExit(arguments: ["serve", "--port", "0"], environment: environment)
        #expect(badTokenURI.status != 0)
        #expect(badTokenURI.output.contains("fcm.token_uri"), "\(badTokenURI.output)")
    }
}
