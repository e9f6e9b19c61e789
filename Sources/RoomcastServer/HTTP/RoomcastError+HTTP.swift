public import HTTPTypes
public import Hummingbird
public import RoomcastCore

/// Renders a ``RoomcastError`` thrown from a route or middleware as the contract's error response:
/// a status chosen by its code and `{"error": {"code", "message"}}`.
extension RoomcastError: HTTPResponseError {
    /// The status of each code; an unknown code is a 500.
    public var status: HTTPResponse.Status {
        switch code {
        case .invalidPayload, .malformedPacket, .unknownEvent: .badRequest
        case .unauthorized, .tokenExpired: .unauthorized
        case .forbidden: .forbidden
        case .notFound: .notFound
        case .methodNotAllowed: .methodNotAllowed
        case .conflict: .conflict
        case .limitExceeded: .unprocessableContent
        case .payloadTooLarge: .contentTooLarge
        case .rateLimited: .tooManyRequests
        case .unavailable: .serviceUnavailable
        default: .internalServerError
        }
    }

    /// The JSON error body with ``status``, encoded by the context's response encoder.
    public func response(from request: Request, context: some RequestContext) throws -> Response {
        var response = try context.responseEncoder.encode(ErrorBody(self), from: request, context: context)
        response.status = status
        if let retryAfter {
            // Whole seconds, rounded up: a client that waits that long is in the next window.
            let seconds = (retryAfter.wholeMilliseconds + 999) / 1000
            response.headers[.retryAfter] = String(max(1, seconds))
        }
        return response
    }
}
