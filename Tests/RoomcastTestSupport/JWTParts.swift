import Foundation

/// A compact JWT split into its decoded parts, for stand-ins that check what clients sign.
struct JWTParts {
    /// The decoded header JSON.
    let header: Data
    /// The decoded claims JSON.
    let claims: Data
    /// The decoded signature.
    let signature: Data
    /// `header.claims` as sent: what the signature covers.
    let signingInput: Data

    /// Splits and decodes `jwt`.
    /// - Throws: when it is not three base64url parts.
    init(_ jwt: Substring) throws {
        let parts = jwt.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3 else { throw JWTPartsError("a JWT has 3 parts, this one \(parts.count)") }
        guard let header = Self.base64URLDecoded(parts[0]), let claims = Self.base64URLDecoded(parts[1]),
            let signature = Self.base64URLDecoded(parts[2])
        else { throw JWTPartsError("a JWT part is not base64url") }
        self.header = header
        self.claims = claims
        self.signature = signature
        signingInput = Data("\(parts[0]).\(parts[1])".utf8)
    }

    /// The header and claims decoded as `Header` and `Claims`.
    func decode<Header: Decodable, Claims: Decodable>(_: Header.Type, _: Claims.Type) throws -> (Header, Claims) {
        (try JSONDecoder().decode(Header.self, from: header), try JSONDecoder().decode(Claims.self, from: claims))
    }

    private static func base64URLDecoded(_ text: Substring) -> Data? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        return Data(base64Encoded: base64)
    }
}

/// Why a JWT did not verify.
public struct JWTPartsError: Error, CustomStringConvertible {
    /// What was wrong with the token.
    public var description: String

    init(_ description: String) {
        self.description = description
    }
}
