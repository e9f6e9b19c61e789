/// What APNs answered: any HTTP status, since the caller decides what 410 or 500 means.
public struct APNsResponse: Sendable, Hashable {
    /// The HTTP status: 200, 400, 403, 410, 429, 500, 503 …
    public var status: Int
    /// The `reason` of the JSON error body (`BadDeviceToken`, `Unregistered` …), when there is one.
    public var reason: String?
    /// The `apns-id` response header.
    public var apnsID: String?
    /// The `timestamp` of a 410 body, in milliseconds since the epoch, when there is one.
    public var timestamp: Int?

    /// Creates a response, for fakes that stand in for a client.
    public init(status: Int, reason: String? = nil, apnsID: String? = nil, timestamp: Int? = nil) {
        self.status = status
        self.reason = reason
        self.apnsID = apnsID
        self.timestamp = timestamp
    }
}
