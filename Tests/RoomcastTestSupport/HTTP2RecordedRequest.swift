public import NIOCore
import NIOHPACK

/// One request that reached a ``LocalHTTP2Server``, as the server read it.
public struct HTTP2RecordedRequest: Sendable {
    /// `:method`.
    public var method: String
    /// `:path`, e.g. `/3/device/<token>` or `/v1/projects/<project>/messages:send`.
    public var path: String
    /// `:authority`, when the client sent one.
    public var authority: String?
    /// Every other header, names lowercased (HTTP/2 sends them so); pseudo-headers excluded.
    public var headers: [String: String]
    /// The request body.
    public var body: ByteBuffer

    init(head: HPACKHeaders, body: ByteBuffer) {
        method = head.first(name: ":method") ?? ""
        path = head.first(name: ":path") ?? ""
        authority = head.first(name: ":authority")
        var headers: [String: String] = [:]
        for (name, value, _) in head where !name.hasPrefix(":") {
            headers[name.lowercased()] = value
        }
        self.headers = headers
        self.body = body
    }
}

/// A request to the APNs stand-in.
public typealias APNsRecordedRequest = HTTP2RecordedRequest
