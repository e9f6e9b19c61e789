public import PushHTTP2

/// Where APNs is, and whether to reach it over TLS or plain HTTP/2.
public struct APNsEndpoint: Sendable, Hashable, CustomStringConvertible {
    /// Apple's production service.
    public static let production = APNsEndpoint(HTTP2Endpoint(host: "api.push.apple.com", port: 443, usesTLS: true))
    /// Apple's sandbox, for development builds of the app.
    public static let sandbox = APNsEndpoint(HTTP2Endpoint(host: "api.sandbox.push.apple.com", port: 443, usesTLS: true))

    /// The host, port and transport, shared with the other push clients.
    let http2: HTTP2Endpoint

    private init(_ http2: HTTP2Endpoint) {
        self.http2 = http2
    }

    /// Parses `https://host[:port]` (TLS, ALPN h2, system trust roots) or `http://host:port`
    /// (HTTP/2 with prior knowledge, for local test servers).
    ///
    /// An IPv6 host is written in brackets; a trailing `/` is allowed, any other path is not.
    public init(url: String) throws(APNsError) {
        do throws(HTTP2ClientError) {
            http2 = try HTTP2Endpoint(url: url)
        } catch {
            throw APNsError(error)
        }
    }

    /// Host name or IP address.
    public var host: String { http2.host }
    /// TCP port.
    public var port: Int { http2.port }
    /// TLS with ALPN `h2` when true; HTTP/2 with prior knowledge (h2c) when false.
    public var usesTLS: Bool { http2.usesTLS }

    /// The endpoint as a URL.
    public var description: String { http2.description }
}
