import HTTPTypes
import Hummingbird

/// A successful REST response: `{"data": value}` with a status (200 by default, 201 for a
/// creation), encoded by the context's JSON encoder.
///
/// Timestamps need no encoder setting: `Timestamp` encodes itself as ISO 8601 with milliseconds.
struct APIResponse<Value: Encodable & Sendable>: ResponseGenerator, Sendable {
    /// The envelope actually encoded.
    private struct Envelope: Encodable {
        var data: Value
    }

    /// The response's status.
    var status: HTTPResponse.Status
    /// The value under `data`.
    var value: Value

    /// Creates a response.
    /// - Parameters:
    ///   - status: `.ok` or, for a created resource, `.created`.
    ///   - value: the value under `data`.
    init(status: HTTPResponse.Status = .ok, _ value: Value) {
        self.status = status
        self.value = value
    }

    /// The JSON body with ``status``.
    func response(from request: Request, context: some RequestContext) throws -> Response {
        var response = try context.responseEncoder.encode(Envelope(data: value), from: request, context: context)
        response.status = status
        return response
    }
}
