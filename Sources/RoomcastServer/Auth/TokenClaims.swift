import JWTKit

/// The claims of a Roomcast access token: who (`sub`), since when (`iat`, `nbf`) and until when
/// (`exp`).
///
/// Only `sub` and `exp` are required, so that tokens from an external issuer sharing the key are
/// accepted. ``verify(using:)`` checks nothing: ``TokenService`` checks `exp` itself, so that an
/// expired token can be told apart from a forged one.
struct TokenClaims: JWTPayload, Equatable {
    /// The user's id, as text; ``TokenService`` parses it as a ``UserID``.
    var sub: SubjectClaim
    /// When the token was issued; optional for external issuers.
    var iat: IssuedAtClaim?
    /// When the token stops being accepted.
    var exp: ExpirationClaim
    /// Before when the token is not accepted yet; optional.
    var nbf: NotBeforeClaim?

    /// Accepts every payload that decoded: the service checks expiry with its own clock.
    func verify(using algorithm: some JWTAlgorithm) throws {}
}
