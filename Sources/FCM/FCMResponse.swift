/// What FCM answered to `messages:send`: any HTTP status, since the caller decides what it means.
public struct FCMResponse: Sendable, Hashable {
    /// The HTTP status: 200, 400, 401, 403, 404, 429, 500, 503 …
    public var status: Int
    /// The error's canonical status (`INVALID_ARGUMENT`, `NOT_FOUND`, `UNAUTHENTICATED` …), when
    /// there is an error body.
    public var errorStatus: String?
    /// The `errorCode` of the error's `google.firebase.fcm.v1.FcmError` detail (`UNREGISTERED`,
    /// `QUOTA_EXCEEDED`, `SENDER_ID_MISMATCH` …), when there is one.
    public var errorCode: String?
    /// The error's message, when there is one.
    public var message: String?
    /// The message's name (`projects/<project>/messages/<id>`) when FCM accepted it.
    public var name: String?

    /// Creates a response, for fakes that stand in for a client.
    public init(status: Int, errorStatus: String? = nil, errorCode: String? = nil, message: String? = nil, name: String? = nil) {
        self.status = status
        self.errorStatus = errorStatus
        self.errorCode = errorCode
        self.message = message
        self.name = name
    }

    /// True when FCM says the registration token is no longer valid (the app was removed, the
    /// token expired): `404 NOT_FOUND`, or any status with the error code `UNREGISTERED`.
    public var isUnregistered: Bool {
        status == 404 || errorCode == "UNREGISTERED"
    }
}
