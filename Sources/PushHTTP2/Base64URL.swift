package import Foundation

/// Base64url without padding (RFC 7515), as JWTs are written: both push clients sign one.
package enum Base64URL {
    /// `data` in base64url, with no trailing `=`.
    package static func encode(_ data: some DataProtocol) -> String {
        var text = Data(data).base64EncodedString()
        text = text.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        while text.hasSuffix("=") { text.removeLast() }
        return text
    }

    /// `base64url(header).base64url(claims)`, the part of a JWT its signature covers; keys sorted
    /// and slashes unescaped, so the same claims always give the same text.
    package static func jwtSigningInput(header: some Encodable, claims: some Encodable) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Push tokens' headers and claims are strings and integers: encoding them cannot fail.
        let header = try! encoder.encode(header)
        let claims = try! encoder.encode(claims)
        return encode(header) + "." + encode(claims)
    }
}
