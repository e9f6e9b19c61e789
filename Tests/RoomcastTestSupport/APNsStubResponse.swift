import Foundation

/// What a ``LocalAPNsServer`` answers to one request.
public struct APNsStubResponse: Sendable {
    /// The HTTP status.
    public var status: Int
    /// Sent as the JSON body `{"reason": …}` when set, as APNs does with an error status.
    public var reason: String?
    /// Added to the JSON body as `timestamp` (milliseconds), as APNs does with a 410.
    public var timestamp: Int?
    /// Sends GOAWAY on the connection just before this answer, as APNs does before it closes a
    /// connection: the answer still arrives, later requests must use a new connection.
    public var goAway: Bool

    /// Creates a response.
    public init(status: Int, reason: String? = nil, timestamp: Int? = nil, goAway: Bool = false) {
        self.status = status
        self.reason = reason
        self.timestamp = timestamp
        self.goAway = goAway
    }

    /// `200` with no body: the push was accepted.
    public static let ok = APNsStubResponse(status: 200)

    /// Any status, with an optional error reason and timestamp.
    public static func status(_ status: Int, reason: String? = nil, timestamp: Int? = nil) -> APNsStubResponse {
        APNsStubResponse(status: status, reason: reason, timestamp: timestamp)
    }

    /// The JSON body, or nil when there is nothing to say.
    var body: String? {
        guard reason != nil || timestamp != nil else { return nil }
        var fields: [String] = []
        if let reason { fields.append("\"reason\":\"\(reason)\"") }
        if let timestamp { fields.append("\"timestamp\":\(timestamp)") }
        return "{" + fields.joined(separator: ",") + "}"
    }

    /// The same answer as the HTTP/2 server sends it; APNs echoes the request's `apns-id`, or
    /// makes one up.
    func http2(for request: APNsRecordedRequest) -> HTTP2StubResponse {
        HTTP2StubResponse(status: status, headers: ["apns-id": request.headers["apns-id"] ?? UUID().uuidString], body: body, goAway: goAway)
    }
}
