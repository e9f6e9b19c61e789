import HTTPTypes
import Hummingbird
import Logging
import RoomcastCore

/// Authenticates requests that carry `Authorization: Bearer <jwt>`, setting
/// ``RoomcastRequestContext/userID``.
///
/// A request without the header passes through anonymous; routes that need a user call
/// ``RoomcastRequestContext/requireUser()``. A header that is not a valid Bearer token, or whose
/// token fails ``TokenService/verify(_:now:)``, ends the request with 401 `unauthorized` or
/// `token_expired`.
///
/// Add it to the REST routes only, not to the Socket.IO upgrade: a socket's token may come in its
/// CONNECT packet instead, and a refused upgrade can only be a bare 400 (Hummingbird answers it so), so the
/// socket reports token errors after the upgrade.
struct AuthMiddleware: RouterMiddleware {
    typealias Context = RoomcastRequestContext

    /// Verifies the tokens.
    let tokens: TokenService

    func handle(
        _ request: Request,
        context: Context,
        next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        guard let authorization = request.headers[.authorization] else {
            return try await next(request, context)
        }
        guard let bearer = BearerToken(authorization: authorization) else {
            throw RoomcastError(.unauthorized, "expected 'Authorization: Bearer <token>'")
        }
        let user = try tokens.verify(bearer.value)
        var context = context
        context.userID = user
        context.logger[metadataKey: "user"] = .string(user.rawValue)
        return try await next(request, context)
    }
}
