import Foundation
import JWTKit
import RoomcastCore
import SocketIO

/// Issues and verifies the HS256 JSON Web Tokens that REST requests and sockets authenticate with.
///
/// A token carries `sub` (the ``UserID``), `iat` and `exp`, in whole seconds. Any token signed
/// with the same key is accepted, including one from an external issuer that sets only `sub` and
/// `exp`; its header must name `HS256`.
struct TokenService: Sendable {
    /// The shortest secret accepted, in bytes: HS256 wants a key at least as long as its digest.
    static let minimumSecretLength = 32
    /// The longest token looked at; anything longer is refused before any decoding.
    static let maximumTokenLength = 8192
    /// The configuration key the secret is read from.
    static let secretKey = "jwt.secret"

    /// How long an issued token is valid.
    let lifetime: Duration
    /// The key collection issuing tokens, with the HMAC key added. `JWTKeyCollection` is an actor
    /// and adding a key needs `await`, so a synchronous initialiser starts this task and every
    /// use awaits it.
    private let keys: Task<JWTKeyCollection, Never>
    /// Verifies tokens, with the same key.
    private let verifier: HS256Verifier

    /// Creates a service signing with `secret`.
    /// - Parameters:
    ///   - secret: the shared HMAC key; check it first with ``validate(secret:)`` (jwt-kit asserts
    ///     on a key shorter than ``minimumSecretLength`` bytes in debug builds).
    ///   - lifetime: how long an issued token is valid.
    init(secret: String, lifetime: Duration) {
        let key = HMACKey(from: secret)
        self.lifetime = lifetime
        self.keys = Task { await JWTKeyCollection().add(hmac: key, digestAlgorithm: .sha256) }
        self.verifier = HS256Verifier(secret: secret)
    }

    /// Refuses a secret shorter than ``minimumSecretLength`` bytes (UTF-8), naming `jwt.secret`.
    static func validate(secret: String) throws(ConfigurationError) {
        let length = secret.utf8.count
        guard length >= minimumSecretLength else {
            throw ConfigurationError(
                key: secretKey,
                reason: "must be at least \(minimumSecretLength) bytes for HS256 (got \(length))"
            )
        }
    }

    /// Issues a token for `user`, valid from `now` for ``lifetime``.
    /// - Parameters:
    ///   - user: the token's subject.
    ///   - now: the issue time; rounded down to whole seconds.
    func issue(for user: UserID, now: Date = .now) async throws -> String {
        let issuedAt = Date(timeIntervalSince1970: now.timeIntervalSince1970.rounded(.down))
        let seconds = (lifetime / .seconds(1)).rounded(.down)
        let claims = TokenClaims(
            sub: SubjectClaim(value: user.rawValue),
            iat: IssuedAtClaim(value: issuedAt),
            exp: ExpirationClaim(value: issuedAt.addingTimeInterval(seconds))
        )
        // jwt-kit fills in `alg: HS256` and `typ: JWT` from the key.
        return try await keys.value.sign(claims)
    }

    /// A verified token: whose it is and until when it is accepted.
    struct Verified: Sendable {
        let user: UserID
        let expires: Date

        /// `expires` in whole seconds since 1970, rounded up (a socket's timer runs on them).
        var expirySeconds: Int64 { Int64(expires.timeIntervalSince1970.rounded(.up)) }
    }

    /// Verifies `token` and returns its subject.
    /// - Parameters:
    ///   - token: a compact JWS (`header.payload.signature`).
    ///   - now: the time `exp` is compared with; a token is expired from its `exp` second on.
    /// - Throws: see ``verifyToken(_:now:)``.
    func verify(_ token: String, now: Date = .now) throws(RoomcastError) -> UserID {
        try verifyToken(token, now: now).user
    }

    /// Verifies `token` and returns its subject and expiry.
    /// - Throws: `token_expired` for a genuine token past its `exp`; `unauthorized` for anything
    ///   else (malformed, another algorithm or key, `alg: none`, a `crit` header, missing or
    ///   invalid `sub` or `exp`, `nbf` still ahead).
    func verifyToken(_ token: String, now: Date = .now) throws(RoomcastError) -> Verified {
        guard !token.isEmpty, token.utf8.count <= Self.maximumTokenLength, let signed = verifier.verify(token) else {
            throw RoomcastError(.unauthorized, "invalid token")
        }
        // Only HS256 is ours: a header naming another algorithm (`none` included) is refused even
        // over a valid HS256 signature. `crit` names extensions the verifier must understand
        // (RFC 7515 §4.1.11): none here.
        guard signed.header.string("alg") == "HS256", !signed.header.contains("crit") else {
            throw RoomcastError(.unauthorized, "invalid token")
        }
        let claims = signed.claims
        // `iat` and `nbf` may be absent or null; present, they are times like `exp`.
        guard let subject = claims.string("sub"), let expires = claims.number("exp"),
            claims.isAbsentOrNull("iat") || claims.number("iat") != nil,
            claims.isAbsentOrNull("nbf") || claims.number("nbf") != nil
        else {
            throw RoomcastError(.unauthorized, "invalid token")
        }
        guard let user = UserID(subject) else {
            throw RoomcastError(.unauthorized, "invalid token subject")
        }
        guard now.timeIntervalSince1970 < expires else {
            throw RoomcastError(.tokenExpired, "token expired")
        }
        if let notBefore = claims.number("nbf"), now.timeIntervalSince1970 < notBefore {
            throw RoomcastError(.unauthorized, "token not valid yet")
        }
        return Verified(user: user, expires: Date(timeIntervalSince1970: expires))
    }
}
