import Hummingbird

/// Sets the largest request body the routes after it read (`http.max_body_bytes`); a larger one
/// is answered 413 `payload_too_large` by ``ErrorMiddleware``, which comes after it. It throws
/// nothing of its own.
struct BodyLimitMiddleware: RouterMiddleware {
    typealias Context = RoomcastRequestContext

    let maxBodySize: Int

    func handle(
        _ request: Request,
        context: RoomcastRequestContext,
        next: (Request, RoomcastRequestContext) async throws -> Response
    ) async throws -> Response {
        var context = context
        context.maxUploadSize = maxBodySize
        return try await next(request, context)
    }
}
