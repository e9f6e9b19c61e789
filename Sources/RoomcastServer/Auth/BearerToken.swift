import HTTPTypes

/// The token of an `Authorization: Bearer <token>` header (RFC 6750), shared by the REST
/// middleware and the WebSocket upgrade.
///
/// The scheme is matched case-insensitively and may be followed by several spaces; the token must
/// be a non-empty `token68` (letters, digits, `-._~+/`, then optional `=` padding), which every
/// JWT is. Anything else (another scheme, no token, two tokens) is no bearer token.
struct BearerToken: Hashable, Sendable {
    /// The token, as sent.
    let value: String

    /// Parses an `Authorization` header value; `nil` unless it is a well-formed Bearer credential.
    init?(authorization: some StringProtocol) {
        let bytes = Array(authorization.utf8)
        guard let first = bytes.firstIndex(where: { !Self.isSpace($0) }),
            let last = bytes.lastIndex(where: { !Self.isSpace($0) })
        else { return nil }
        let credentials = bytes[first...last]
        let scheme = credentials.prefix(while: { !Self.isSpace($0) })
        guard String(decoding: scheme, as: UTF8.self).lowercased() == "bearer" else { return nil }
        let token = credentials[scheme.endIndex...].drop(while: Self.isSpace)
        // token68: at least one character, `=` only as trailing padding.
        guard let head = token.first, head != UInt8(ascii: "=") else { return nil }
        var padding = false
        for byte in token {
            if byte == UInt8(ascii: "=") {
                padding = true
            } else if padding || !Self.isToken68(byte) {
                return nil
            }
        }
        self.value = String(decoding: token, as: UTF8.self)
    }

    /// Reads the request's `Authorization` header; `nil` when it is missing or not Bearer.
    init?(headers: HTTPFields) {
        guard let authorization = headers[.authorization] else { return nil }
        self.init(authorization: authorization)
    }

    private static func isSpace(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t")
    }

    private static func isToken68(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: "+"), UInt8(ascii: "/"):
            return true
        default:
            return false
        }
    }
}
