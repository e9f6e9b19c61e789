import CryptoExtras
import Foundation

/// A fresh service account (an RSA key, a project, an e-mail) as Google's JSON key file, plus a
/// verifier for the assertions it signs.
public struct FCMTestAccount: Sendable {
    /// The Firebase project.
    public let projectID: String
    /// The account's e-mail.
    public let clientEmail: String
    /// The key's id.
    public let privateKeyID = "0123456789abcdef0123456789abcdef01234567"
    /// The private key, PKCS#8 PEM, as Google hands it out.
    public let pem: String
    private let publicKey: _RSA.Signing.PublicKey

    private init(projectID: String, privateKey: _RSA.Signing.PrivateKey) {
        self.projectID = projectID
        clientEmail = "roomcast-push@\(projectID).iam.gserviceaccount.com"
        pem = privateKey.pemRepresentation
        publicKey = privateKey.publicKey
    }

    /// A new account with a random 2048-bit key.
    public static func generate(projectID: String = "roomcast-test") throws -> FCMTestAccount {
        FCMTestAccount(projectID: projectID, privateKey: try _RSA.Signing.PrivateKey(keySize: .bits2048))
    }

    /// The key file, with `token_uri` pointing at a stand-in.
    public func json(tokenURI: String) -> String {
        let fields: [String: String] = [
            "type": "service_account", "project_id": projectID, "private_key_id": privateKeyID, "private_key": pem,
            "client_email": clientEmail, "client_id": "104857600000000000000", "token_uri": tokenURI,
        ]
        // Strings only: cannot fail.
        return String(decoding: try! JSONEncoder().encode(fields), as: UTF8.self)
    }

    /// The claims of a verified assertion.
    public struct Claims: Decodable, Sendable {
        public var iss: String
        public var scope: String
        public var aud: String
        public var iat: Int
        public var exp: Int
    }

    /// Verifies an assertion as Google would: RS256 (PKCS#1 v1.5, SHA-256) with the public half,
    /// `kid`, `iss`, the FCM scope, `aud` = `tokenURI`, and `exp` an hour after `iat`.
    public func verify(assertion: Substring, tokenURI: String) throws -> Claims {
        struct Header: Decodable { var alg: String; var typ: String?; var kid: String? }
        let jwt = try JWTParts(assertion)
        let (header, claims) = try jwt.decode(Header.self, Claims.self)
        guard header.alg == "RS256" else { throw JWTPartsError("alg is \(header.alg), not RS256") }
        guard header.kid == privateKeyID else { throw JWTPartsError("kid is \(header.kid ?? "none"), not \(privateKeyID)") }
        guard claims.iss == clientEmail else { throw JWTPartsError("iss is \(claims.iss), not \(clientEmail)") }
        guard claims.scope == "https://www.googleapis.com/auth/firebase.messaging" else { throw JWTPartsError("scope is \(claims.scope)") }
        guard claims.aud == tokenURI else { throw JWTPartsError("aud is \(claims.aud), not \(tokenURI)") }
        guard claims.exp == claims.iat + 3600 else { throw JWTPartsError("exp \(claims.exp) is not iat \(claims.iat) + 3600") }
        let signature = _RSA.Signing.RSASignature(rawRepresentation: jwt.signature)
        guard publicKey.isValidSignature(signature, for: jwt.signingInput, padding: .insecurePKCS1v1_5) else {
            throw JWTPartsError("the signature does not verify with the public key")
        }
        return claims
    }
}
