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
        let parts = bearer.dropFirst("bearer ".count).split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3 else { throw APNsTestKeyError("a JWT has 3 parts, this one \(parts.count)") }
        guard let headerData = Self.base64URLDecoded(parts[0]),
              let claimsData = Self.base64URLDecoded(parts[1]),
              let signatureData = Self.base64URLDecoded(parts[2])
        else { throw APNsTestKeyError("a JWT part is not base64url") }

        struct Header: Decodable { var alg: String; var kid: String }
        struct Claims: Decodable { var iss: String; var iat: Int }
        let header = try JSONDecoder().decode(Header.self, from: headerData)
        let claims = try JSONDecoder().decode(Claims.self, from: claimsData)
        guard header.alg == "ES256" else { throw APNsTestKeyError("alg is \(header.alg), not ES256") }
        guard header.kid == keyID else { throw APNsTestKeyError("kid is \(header.kid), not \(keyID)") }
        guard claims.iss == teamID else { throw APNsTestKeyError("iss is \(claims.iss), not \(teamID)") }

        // ES256 in a JWT is the raw r||s pair, 64 bytes, not DER.
        let signature = try P256.Signing.ECDSASignature(rawRepresentation: signatureData)
        let signingInput = Data("\(parts[0]).\(parts[1])".utf8)
        guard publicKey.isValidSignature(signature, for: signingInput) else {
            throw APNsTestKeyError("the signature does not verify with the public key")
        }
        return (claims.iss, claims.iat)
    }

    private static func base64URLDecoded(_ text: Substring) -> Data? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        return Data(base64Encoded: base64)
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
