import Crypto
import Foundation
public import PushHTTP2

/// An ES256 key in Apple's `.p8` form (PKCS#8 PEM, `-----BEGIN PRIVATE KEY-----`), which signs
/// the provider tokens APNs asks for.
public struct APNsSigningKey: Sendable {
    private let key: P256.Signing.PrivateKey

    /// Reads a key from PEM text; a SEC1 `EC PRIVATE KEY` is accepted too.
    public init(pem: String) throws(APNsError) {
        do {
            key = try P256.Signing.PrivateKey(pemRepresentation: pem)
        } catch {
            // The PEM text is a secret: the error names what was expected, never what was given.
            throw APNsError.invalidKey.with("not a P-256 (ES256) private key in PEM form", underlying: error)
        }
    }

    /// Reads a key from a `.p8` file.
    public init(contentsOfFile path: String) throws(APNsError) {
        let pem: String
        do {
            pem = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw APNsError.invalidKey.with("cannot read \(path)", underlying: error)
        }
        do {
            try self.init(pem: pem)
        } catch {
            throw APNsError.invalidKey.with("\(path) is not a P-256 (ES256) private key in PEM form")
        }
    }

    /// A provider token: the JWT `{"alg":"ES256","kid":…}.{"iss":…,"iat":…}` with its raw `r||s`
    /// signature, every part base64url-encoded without padding.
    func providerToken(keyID: String, teamID: String, issuedAt: Int) -> String {
        struct Header: Encodable { var alg = "ES256"; var kid: String }
        struct Claims: Encodable { var iss: String; var iat: Int }
        let signingInput = Base64URL.jwtSigningInput(header: Header(kid: keyID), claims: Claims(iss: teamID, iat: issuedAt))
        // Signing with a valid key fails only if BoringSSL itself is broken.
        let signature = try! key.signature(for: Data(signingInput.utf8))
        return signingInput + "." + Base64URL.encode(signature.rawRepresentation)
    }
}
