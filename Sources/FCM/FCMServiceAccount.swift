import CryptoExtras
public import Foundation
public import PushHTTP2

/// A Google service account's key file: who signs (`client_email`), with what (`private_key`, an
/// RSA key in PEM), where to exchange the signed assertion (`token_uri`) and for which Firebase
/// project (`project_id`).
///
/// Its description names the account and project only: the key never reaches a log.
public struct FCMServiceAccount: Sendable, CustomStringConvertible {
    /// The OAuth scope FCM's HTTP v1 API asks for.
    public static let scope = "https://www.googleapis.com/auth/firebase.messaging"

    /// The account's e-mail, the assertion's `iss`.
    public let clientEmail: String
    /// The Firebase project pushes are sent for.
    public let projectID: String
    /// Where assertions are exchanged for access tokens, the assertion's `aud`.
    public let tokenURI: String
    /// The key's id, sent as the assertion's `kid` when the file has one.
    public let privateKeyID: String?
    private let key: _RSA.Signing.PrivateKey

    /// Reads a service account from the JSON Google hands out.
    public init(json: Data) throws(FCMError) {
        struct File: Decodable {
            var type: String?
            var project_id: String?
            var private_key_id: String?
            var private_key: String?
            var client_email: String?
            var token_uri: String?
        }
        let file: File
        do {
            file = try JSONDecoder().decode(File.self, from: json)
        } catch {
            // The decoder's error may quote the file: say only what is wrong with it.
            throw FCMError.invalidServiceAccount.with("not a service-account JSON object")
        }
        if let type = file.type, type != "service_account" {
            throw FCMError.invalidServiceAccount.with("type is '\(type)', not 'service_account'")
        }
        func required(_ value: String?, _ name: String) throws(FCMError) -> String {
            guard let value, !value.isEmpty else { throw FCMError.invalidServiceAccount.with("\(name) is missing") }
            return value
        }
        clientEmail = try required(file.client_email, "client_email")
        projectID = try required(file.project_id, "project_id")
        // Project ids are lowercase letters, digits and hyphens; they go into the request path.
        guard projectID.utf8.allSatisfy({ $0 == UInt8(ascii: "-") || (0x30...0x39).contains($0) || (0x61...0x7a).contains($0) }) else {
            throw FCMError.invalidServiceAccount.with("project_id '\(projectID)' is not a Firebase project id")
        }
        tokenURI = file.token_uri.flatMap { $0.isEmpty ? nil : $0 } ?? "https://oauth2.googleapis.com/token"
        privateKeyID = file.private_key_id.flatMap { $0.isEmpty ? nil : $0 }
        do {
            key = try _RSA.Signing.PrivateKey(pemRepresentation: try required(file.private_key, "private_key"))
        } catch let error as FCMError {
            throw error
        } catch {
            throw FCMError.invalidServiceAccount.with("private_key is not an RSA private key (2048 bits or more) in PEM form")
        }
    }

    /// Reads a service account's key file.
    public init(contentsOfFile path: String) throws(FCMError) {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw FCMError.invalidServiceAccount.with("cannot read \(path)", underlying: error)
        }
        do throws(FCMError) {
            try self.init(json: data)
        } catch {
            throw error.prefixed(path)
        }
    }

    /// The signed assertion exchanged for an access token: an RS256 JWT with `iss`, `scope`,
    /// `aud` (the token URI), `iat` and `exp` an hour later, every part base64url-encoded.
    func assertion(audience: String, issuedAt: Int) -> String {
        struct Header: Encodable { var alg = "RS256"; var typ = "JWT"; var kid: String? }
        struct Claims: Encodable { var iss: String; var scope: String; var aud: String; var iat: Int; var exp: Int }
        let signingInput = Base64URL.jwtSigningInput(
            header: Header(kid: privateKeyID),
            claims: Claims(iss: clientEmail, scope: Self.scope, aud: audience, iat: issuedAt, exp: issuedAt + 3600)
        )
        // Signing with a valid key fails only if BoringSSL itself is broken.
        let signature = try! key.signature(for: Data(signingInput.utf8), padding: .insecurePKCS1v1_5)
        return signingInput + "." + Base64URL.encode(signature.rawRepresentation)
    }

    public var description: String { "service account \(clientEmail) (project \(projectID))" }
}
