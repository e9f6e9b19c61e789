/// What a ``LocalHTTP2Server`` answers to one request.
public struct HTTP2StubResponse: Sendable {
    /// The HTTP status.
    public var status: Int
    /// Response headers beside `:status` (and, with a body, `content-type` and `content-length`).
    public var headers: [String: String]
    /// A JSON body, when there is one.
    public var body: String?
    /// Sends GOAWAY on the connection just before this answer, as push services do before they
    /// close a connection: the answer still arrives, later requests must use a new connection.
    public var goAway: Bool

    /// Creates a response.
    public init(status: Int, headers: [String: String] = [:], body: String? = nil, goAway: Bool = false) {
        self.status = status
        self.headers = headers
        self.body = body
        self.goAway = goAway
    }
}
