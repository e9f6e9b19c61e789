import Foundation

/// Where a push service is, and whether to reach it over TLS or plain HTTP/2.
public struct HTTP2Endpoint: Sendable, Hashable, CustomStringConvertible {
    /// Host name or IP address.
    public let host: String
    /// TCP port.
    public let port: Int
    /// TLS with ALPN `h2` when true; HTTP/2 with prior knowledge (h2c) when false.
    public let usesTLS: Bool

    /// An endpoint from its parts; ``init(url:)`` checks them, this does not.
    public init(host: String, port: Int, usesTLS: Bool) {
        self.host = host
        self.port = port
        self.usesTLS = usesTLS
    }

    /// Parses `https://host[:port]` (TLS, ALPN h2, system trust roots) or `http://host:port`
    /// (HTTP/2 with prior knowledge, for local test servers).
    ///
    /// An IPv6 host is written in brackets; a trailing `/` is allowed, any other path is not.
    public init(url: String) throws(HTTP2ClientError) {
        (self, _) = try Self.parse(url, allowingPath: false)
    }

    /// Parses a URL with a path, such as an OAuth token URI: the endpoint as ``init(url:)`` reads
    /// it, and the path (`/` when there is none) with its query, if any.
    public static func parse(requestURL url: String) throws(HTTP2ClientError) -> (endpoint: HTTP2Endpoint, path: String) {
        try parse(url, allowingPath: true)
    }

    private static func parse(_ url: String, allowingPath: Bool) throws(HTTP2ClientError) -> (HTTP2Endpoint, String) {
        func invalid(_ why: String) -> HTTP2ClientError {
            HTTP2ClientError.invalidEndpoint.with("'\(url)': \(why)")
        }
        guard let components = URLComponents(string: url), let scheme = components.scheme, ["https", "http"].contains(scheme) else {
            throw invalid("expected https://host[:port] or http://host:port")
        }
        guard components.user == nil, components.password == nil else { throw invalid("no credentials allowed") }
        guard components.fragment == nil else { throw invalid("no fragment allowed") }
        guard allowingPath || (["", "/"].contains(components.path) && components.query == nil) else {
            throw invalid("no path or query allowed")
        }
        // An IPv6 literal keeps its brackets in `host`.
        guard var host = components.host, !host.isEmpty else { throw invalid("missing host") }
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        let usesTLS = scheme == "https"
        guard let port = components.port ?? (usesTLS ? 443 : nil) else {
            // Nothing listens for h2c on a well-known port: a local server always names its own.
            throw invalid("http:// needs an explicit port")
        }
        guard (1...65535).contains(port) else { throw invalid("port must be 1-65535") }
        var path = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
        if let query = components.percentEncodedQuery { path += "?" + query }
        return (HTTP2Endpoint(host: host, port: port, usesTLS: usesTLS), path)
    }

    /// The value of `:authority`: the host, with the port unless it is the scheme's default.
    public var authority: String {
        let name = host.contains(":") ? "[\(host)]" : host
        let defaultPort = usesTLS ? 443 : 80
        return port == defaultPort ? name : "\(name):\(port)"
    }

    /// The value of `:scheme`.
    public var scheme: String { usesTLS ? "https" : "http" }

    /// The endpoint as a URL.
    public var description: String { "\(scheme)://\(authority)" }
}
