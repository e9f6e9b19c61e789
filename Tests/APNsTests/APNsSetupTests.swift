import APNs
import Foundation
import PushHTTP2
import RoomcastTestSupport
import Testing

@Suite("APNs endpoints and signing keys")
struct APNsSetupTests {
    @Test("Apple's endpoints use TLS on 443")
    func appleEndpoints() {
        #expect(APNsEndpoint.production.host == "api.push.apple.com")
        #expect(APNsEndpoint.sandbox.host == "api.sandbox.push.apple.com")
        #expect(APNsEndpoint.production.port == 443)
        #expect(APNsEndpoint.production.usesTLS)
        #expect(APNsEndpoint.production.description == "https://api.push.apple.com")
    }

    @Test("URLs parse into host, port and transport")
    func parsesURLs() throws {
        #expect(try APNsEndpoint(url: "https://api.push.apple.com") == .production)
        #expect(try APNsEndpoint(url: "https://api.sandbox.push.apple.com:443/") == .sandbox)
        let local = try APNsEndpoint(url: "http://127.0.0.1:8443")
        #expect(local.host == "127.0.0.1")
        #expect(local.port == 8443)
        #expect(!local.usesTLS)
        let ipv6 = try APNsEndpoint(url: "https://[::1]:2197")
        #expect(ipv6.host == "::1")
        #expect(ipv6.port == 2197)
        #expect(ipv6.description == "https://[::1]:2197")
    }

    @Test(
        "anything else is invalidEndpoint",
        arguments: [
            "", "api.push.apple.com", "ftp://api.push.apple.com", "http://127.0.0.1", "https://",
            "https://:443", "https://api.push.apple.com:0", "https://api.push.apple.com:70000",
            "https://api.push.apple.com:x", "https://api.push.apple.com/3/device", "https://user@api.push.apple.com",
            "https://[::1", "https://[::1]x",
        ]
    )
    func rejectsURLs(url: String) {
        #expect(throws: APNsError.invalidEndpoint) { try APNsEndpoint(url: url) }
    }

    @Test("an invalid endpoint error says which URL and why")
    func endpointErrorDescription() {
        #expect {
            try APNsEndpoint(url: "ftp://push.example")
        } throws: { error in
            let text = String(describing: error)
            return text.contains("invalidEndpoint") && text.contains("ftp://push.example")
        }
    }

    @Test("a .p8 PEM is accepted, from text or from a file")
    func readsKeys() throws {
        let key = APNsTestKey.generate()
        _ = try APNsSigningKey(pem: key.pem)
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("apns-key-\(UUID().uuidString).p8").path
        try key.pem.write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        _ = try APNsSigningKey(contentsOfFile: path)
    }

    @Test(
        "anything but a P-256 private key PEM is invalidKey",
        arguments: [
            "",
            "not a key",
            "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n",
            // A P-384 key: a valid PKCS#8 PEM, but not ES256.
            """
            -----BEGIN PRIVATE KEY-----
            MIG2AgEAMBAGByqGSM49AgEGBSuBBAAiBIGeMIGbAgEBBDDI+tGuAtZgrtx469ND
            ObA9d+UsH+toPLzF6mQz1d+s/rId+YyBH9OcyPnxH+xYzKKhZANiAASjkG5xbal8
            AWrxFHiNxaWuX6hmX794wLssVNMl/U0d+9Zp+AcolnTOELFHBewmztrDr1WkwPR+
            3KmtAgULTBT1ot4J8Z7HHBC0Tp3DcKH5dgA2eX7VuwHfXfvwoDS0xao=
            -----END PRIVATE KEY-----
            """,
        ]
    )
    func rejectsKeys(pem: String) {
        #expect(throws: APNsError.invalidKey) { try APNsSigningKey(pem: pem) }
    }

    @Test("a missing key file is invalidKey naming the path")
    func missingKeyFile() {
        #expect {
            try APNsSigningKey(contentsOfFile: "/nonexistent/AuthKey_ABC.p8")
        } throws: { error in
            (error as? APNsError) == .invalidKey && String(describing: error).contains("/nonexistent/AuthKey_ABC.p8")
        }
    }
}
