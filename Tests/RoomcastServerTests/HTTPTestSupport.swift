import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import RoomcastCore
@testable import RoomcastServer
import Testing

/// The error body clients get: `{"error": {"code", "message"}}`.
struct ErrorEnvelope: Decodable {
    struct Detail: Decodable {
        var code: String
        var message: String
    }

    var error: Detail
}

extension TestResponse {
    /// The body decoded as `type`.
    func decoded<Value: Decodable>(as type: Value.Type = Value.self) throws -> Value {
        try JSONDecoder().decode(type, from: Data(body.readableBytesView))
    }

    /// The body as text.
    var text: String { String(buffer: body) }

    /// Checks that this is a JSON error response with `status` and `code`; returns its message.
    @discardableResult
    func expectError(
        _ status: HTTPResponse.Status,
        _ code: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> String {
        #expect(self.status == status, "body: \(text)", sourceLocation: sourceLocation)
        #expect(headers[.contentType] == "application/json; charset=utf-8", sourceLocation: sourceLocation)
        let envelope = try decoded(as: ErrorEnvelope.self)
        #expect(envelope.error.code == code, sourceLocation: sourceLocation)
        return envelope.error.message
    }
}
