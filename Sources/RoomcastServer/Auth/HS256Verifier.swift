import Crypto
import SocketIO

/// Checks a compact HS256 JWS (`header.payload.signature`) against the node's key and reads its
/// header and claims: base64url, one HMAC and two small JSON objects, with no `JSONDecoder`
/// (jwt-kit decodes a token twice with it, and that was the largest cost of a socket's CONNECT).
///
/// The signature is checked first, in constant time, so nothing an unsigned token says is read.
struct HS256Verifier: Sendable {
    /// A token's parts once its signature held.
    struct Signed {
        var header: JSONObjectReader
        var claims: JSONObjectReader
    }

    /// HMAC-SHA256 with the key already hashed into its inner and outer states: each token then
    /// costs the hashing of its own bytes only (the key's two blocks are done once).
    private let keyed: HMAC<SHA256>

    init(secret: String) {
        self.keyed = HMAC<SHA256>(key: SymmetricKey(data: Array(secret.utf8)))
    }

    /// The header and claims of `token`; nil when it is not three base64url parts, its signature
    /// is not this key's HMAC-SHA256 of the first two, or either of those is not a JSON object.
    func verify(_ token: String) -> Signed? {
        let token = Substring(token).utf8
        let parts = token.split(separator: UInt8(ascii: "."), maxSplits: 3, omittingEmptySubsequences: false)
        guard parts.count == 3, let signature = Base64URL.decode(parts[2]), signature.count == SHA256.byteCount else { return nil }
        var hmac = keyed
        hmac.update(data: Array(token[parts[0].startIndex..<parts[1].endIndex]))
        // `==` against bytes is swift-crypto's constant-time comparison.
        guard hmac.finalize() == signature,
            let header = Base64URL.decode(parts[0]).flatMap({ JSONObjectReader($0) }),
            let claims = Base64URL.decode(parts[1]).flatMap({ JSONObjectReader($0) })
        else { return nil }
        return Signed(header: header, claims: claims)
    }
}

/// Base64url without padding (RFC 7515 §2), strictly: any other byte, or a length no encoding
/// has, is refused.
enum Base64URL {
    static func decode(_ text: Substring.UTF8View) -> [UInt8]? {
        guard text.count % 4 != 1 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.count * 3 / 4)
        var accumulator: UInt32 = 0
        var bits = 0
        for character in text {
            let sextet = alphabet[Int(character)]
            guard sextet != invalid else { return nil }
            accumulator = accumulator << 6 | UInt32(sextet)
            bits += 6
            if bits >= 8 {
                bits -= 8
                bytes.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
            }
        }
        return bytes
    }

    private static let invalid: UInt8 = 0xFF

    /// Each byte's six bits, or `invalid`.
    private static let alphabet: [UInt8] = {
        var table = [UInt8](repeating: invalid, count: 256)
        for (value, character) in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8.enumerated() {
            table[Int(character)] = UInt8(value)
        }
        return table
    }()
}
