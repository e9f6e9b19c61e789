import Foundation
import HTTPTypes
import Hummingbird
import Logging
import RoomcastCore

/// Gives every error response the contract's shape, `{"error": {"code", "message"}}`.
///
/// A ``RoomcastError`` passes through (it renders itself). Hummingbird's own errors are
/// translated by status: a body that does not decode (`DecodingError`, or the 400 `HTTPError`
/// that `request.decode(as:context:)` makes of it) is `invalid_payload`, a body over
/// `maxUploadSize` is `payload_too_large`, an unknown route is `not_found`. Anything else is
/// logged and answered with a generic 500 `internal`, so no detail of a failure reaches clients.
///
/// Add it to the router before any other middleware, so that it also sees their errors and the
/// router's 404.
struct ErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    /// Creates the middleware.
    init() {}

    func handle(
        _ request: Request,
        context: Context,
        next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as RoomcastError {
            GatewayMetrics.httpRejections.increment(error.code.rawValue)
            throw error
        } catch {
            let translated = Self.translate(error, request: request, context: context)
            GatewayMetrics.httpRejections.increment(translated.code.rawValue)
            throw translated
        }
    }

    /// The ``RoomcastError`` a client sees for `error`; logs what it hides.
    static func translate(_ error: any Error, request: Request, context: Context) -> RoomcastError {
        switch error {
        case let error as DecodingError:
            return RoomcastError(.invalidPayload, error.clientDescription)
        case let error as any HTTPResponseError:
            return translate(error, request: request, context: context)
        case is CancellationError:
            context.logger.debug("request cancelled")
            return RoomcastError(.unavailable, "request cancelled, retry later")
        default:
            return unexpected(error, context: context)
        }
    }

    private static func translate(_ error: any HTTPResponseError, request: Request, context: Context) -> RoomcastError {
        let message = (error as? HTTPError)?.body
        switch error.status {
        case .badRequest:
            return RoomcastError(.invalidPayload, message ?? "invalid request")
        case .unauthorized:
            return RoomcastError(.unauthorized, message ?? "unauthorized")
        case .forbidden:
            return RoomcastError(.forbidden, message ?? "forbidden")
        case .notFound:
            return RoomcastError(.notFound, message ?? "no route for \(request.method) \(request.uri.path)")
        case .conflict:
            return RoomcastError(.conflict, message ?? "conflict")
        case .contentTooLarge:
            // `NIOTooManyBytesError.maxBytes` may be what was left of the limit after the first
            // chunk, not the limit; a route collecting with its own limit should throw its own
            // `payload_too_large`.
            return RoomcastError(.payloadTooLarge, "request body larger than \(context.maxUploadSize) bytes")
        case .tooManyRequests:
            return RoomcastError(.rateLimited, message ?? "too many requests")
        case .serviceUnavailable:
            return RoomcastError(.unavailable, message ?? "service unavailable, retry later")
        default:
            // Other client errors (405, 415, 422 ...) have no code of their own.
            if error.status.kind == .clientError {
                return RoomcastError(.invalidPayload, message ?? "request refused (HTTP \(error.status.code))")
            }
            return unexpected(error, context: context)
        }
    }

    private static func unexpected(_ error: any Error, context: Context) -> RoomcastError {
        context.logger.error(
            "unexpected error",
            metadata: ["error": "\(String(reflecting: error))", "error.type": "\(type(of: error))"]
        )
        return RoomcastError(.internalError, "internal server error")
    }
}
