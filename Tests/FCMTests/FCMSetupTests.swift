import FCM
import Foundation
import PushHTTP2
import RoomcastTestSupport
import Testing

@Suite("FCM service accounts and endpoints")
struct FCMSetupTests {
    let account: FCMTestAccount

    init() throws {
        account = try FCMTestAccount.generate(projectID: "roomcast-setup")
    }

    @Test("a service-account key file is read from text or from a file; its description holds no key")
    func readsServiceAccount() throws {
        let json = account.json(tokenURI: "https://oauth2.googleapis.com/token")
        let serviceAccount = try FCMServiceAccount(json: Data(json.utf8))
        #expect(serviceAccount.projectID == "roomcast-setup")
        #expect(serviceAccount.clientEmail == account.clientEmail)
        #expect(serviceAccount.tokenURI == "https://oauth2.googleapis.com/token")
        #expect(serviceAccount.privateKeyID == account.privateKeyID)
        let text = String(describing: serviceAccount) + String(reflecting: serviceAccount)
        #expect(!text.contains("PRIVATE KEY"))
        #expect(!text.contains(account.pem.split(separator: "\n")[1]))

        let path = FileManager.default.temporaryDirectory.appendingPathComponent("fcm-\(UUID().uuidString).json").path
        try json.write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect(try FCMServiceAccount(contentsOfFile: path).projectID == "roomcast-setup")
    }

    @Test("without token_uri, Google's token endpoint is used")
    func defaultTokenURI() throws {
        var fields = try #require(try JSONSerialization.jsonObject(with: Data(account.json(tokenURI: "x").utf8)) as? [String: String])
        fields["token_uri"] = nil
        let serviceAccount = try FCMServiceAccount(json: try JSONSerialization.data(withJSONObject: fields))
        #expect(serviceAccount.tokenURI == "https://oauth2.googleapis.com/token")
    }

    @Test(
        "a key file without an RSA key, an e-mail or a project is invalidServiceAccount naming the field",
        arguments: [
            ("private_key", "private_key"), ("client_email", "client_email"), ("project_id", "project_id"),
        ]
    )
    func missingField(field: String, named: String) throws {
        var fields = try #require(try JSONSerialization.jsonObject(with: Data(account.json(tokenURI: "x").utf8)) as? [String: String])
        fields[field] = nil
        let json = try JSONSerialization.data(withJSONObject: fields)
        #expect {
            try FCMServiceAccount(json: json)
        } throws: { error in
            (error as? FCMError) == .invalidServiceAccount && String(describing: error).contains(named)
        }
    }

    @Test(
        "a private key that is not RSA, a project id that is not one, or not JSON → invalidServiceAccount, never quoting the key",
        arguments: ["private_key", "project_id", "json"]
    )
    func rejectsBadFiles(what: String) throws {
        var fields = try #require(try JSONSerialization.jsonObject(with: Data(account.json(tokenURI: "x").utf8)) as? [String: String])
        var json = Data()
        switch what {
        case "private_key": fields["private_key"] = "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"
        case "project_id": fields["project_id"] = "../other/project"
        default: json = Data("{\"private_key\": \"\(account.pem.prefix(40))".utf8)
        }
        if json.isEmpty { json = try JSONSerialization.data(withJSONObject: fields) }
        #expect {
            try FCMServiceAccount(json: json)
        } throws: { error in
            (error as? FCMError) == .invalidServiceAccount && !String(describing: error).contains("PRIVATE KEY")
        }
    }

    @Test("a missing key file is invalidServiceAccount naming the path")
    func missingFile() {
        #expect {
            try FCMServiceAccount(contentsOfFile: "/nonexistent/firebase-adminsdk.json")
        } throws: { error in
            (error as? FCMError) == .invalidServiceAccount && String(describing: error).contains("/nonexistent/firebase-adminsdk.json")
        }
    }

    @Test("endpoint and token URI are URLs; anything else is invalidEndpoint naming it", arguments: ["ftp://fcm.example", "fcm.googleapis.com"])
    func rejectsEndpoints(url: String) throws {
        let serviceAccount = try FCMServiceAccount(json: Data(account.json(tokenURI: "https://oauth2.googleapis.com/token").utf8))
        #expect(throws: FCMError.invalidEndpoint) { try FCMConfiguration(serviceAccount: serviceAccount, endpointURL: url) }
        #expect(throws: FCMError.invalidEndpoint) { try FCMConfiguration(serviceAccount: serviceAccount, tokenURI: url) }
        _ = try FCMConfiguration(serviceAccount: serviceAccount, endpointURL: "http://127.0.0.1:8080", tokenURI: "http://127.0.0.1:8081/token")
    }
}
