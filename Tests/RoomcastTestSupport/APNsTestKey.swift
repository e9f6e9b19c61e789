import Crypto
import Foundation

/// A fresh P-256 key as a `.p8` PEM, plus a verifier for the provider tokens it signs.
public struct APNsTestKey: Sendable {
    /// The private key, PKCS#8 PEM (`-----BEGIN PRIVATE KEY-----`), as Apple hands it out.
    public let pem: String
    private let publicKey: P256.Signing.PublicKey

    private init(privateKey: P256.Signing.PrivateKey) {
        pem = privateKey.pemRepresentation
        publicKey = privateKey.publicKey
    }

    /// A new random key.
    public static func generate() -> APNsTestKey {
        APNsTestKey(privateKey: P256.Signing.PrivateKey())
    }

    /// Verifies an `authorization` value `bearer <jwt>`: the ES256 signature with the public
    /// half, the header's `alg` and `kid`, the claims' `iss`.
    /// - Returns: the claims `iss` and `iat`.
    public func verify(bearer: String, keyID: String, teamID: String) throws -> (iss: String, iat: Int) {
        guard bearer.hasPrefix("bearer ") else { throw APNsTestKeyError("not 'bearer <jwt>': \(bearer)") }
        let jwt = try JWTParts(bearer.dropFirst("bearer ".count))
        struct Header: Decodable { var alg: String; var kid: String }
        struct Claims: Decodable { var iss: String; var iat: Int }
        let (header, claims) = try jwt.decode(Header.self, Claims.self)
        guard header.alg == "ES256" else { throw APNsTestKeyError("alg is \(header.alg), not ES256") }
        guard header.kid == keyID else { throw APNsTestKeyError("kid is \(header.kid), not \(keyID)") }
        guard claims.iss == teamID else { throw APNsTestKeyError("iss is \(claims.iss), not \(teamID)") }

        // ES256 in a JWT is the raw r||s pair, 64 bytes, not DER.
        let signature = try P256.Signing.ECDSASignature(rawRepresentation: jwt.signature)
        guard publicKey.isValidSignature(signature, for: jwt.signingInput) else {
            throw APNsTestKeyError("the signature does not verify with the public key")
        }
        return (claims.iss, claims.iat)
    }
}

/// Why a provider token did not verify.
public struct APNsTestKeyError: Error, CustomStringConvertible {
    /// What was wrong with the token.
    public var description: String

    init(_ description: String) {
        self.description = description
    }
}
