import HTTPTypes
import Hummingbird
import NIOCore

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

/// A successful REST response whose value is JSON already made, such as an element as the
/// scripts encode it: `{"data": <json>}`, spliced as is, neither decoded nor encoded again.
struct JSONAPIResponse: ResponseGenerator, Sendable {
    /// The response's status.
    var status: HTTPResponse.Status
    /// The JSON value under `data`.
    var json: ByteBuffer

    /// Creates a response.
    /// - Parameters:
    ///   - status: `.ok` or, for a created resource, `.created`.
    ///   - json: one JSON value.
    init(status: HTTPResponse.Status = .ok, _ json: ByteBuffer) {
        self.status = status
        self.json = json
    }

    func response(from request: Request, context: some RequestContext) throws -> Response {
        var body = ByteBuffer(string: #"{"data":"#)
        body.reserveCapacity(minimumWritableBytes: json.readableBytes + 1)
        body.writeImmutableBuffer(json)
        body.writeString("}")
        return Response(status: status, headers: [.contentType: "application/json; charset=utf-8"], body: ResponseBody(byteBuffer: body))
    }
}
