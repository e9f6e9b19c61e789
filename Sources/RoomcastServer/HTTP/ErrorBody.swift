import RoomcastCore

/// The JSON body of an error response: `{"error": {"code": "...", "message": "..."}}`.
struct ErrorBody: Encodable, Sendable {
    /// The error's code and message.
    struct Detail: Encodable, Sendable {
        var code: RoomcastError.Code
        var message: String
    }

    /// The one top-level key.
    var error: Detail

    /// The body for `error`.
    init(_ error: RoomcastError) {
        self.error = Detail(code: error.code, message: error.message)
    }
}
