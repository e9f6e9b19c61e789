public import PushHTTP2

/// Where to send pushes and as whom.
public struct FCMConfiguration: Sendable {
    /// Google's FCM endpoint.
    public static let productionURL = "https://fcm.googleapis.com"

    /// The service account that signs the token exchange.
    public var serviceAccount: FCMServiceAccount
    /// How long one `send` may take, the token exchange and connecting included.
    public var requestTimeout: Duration
    /// Where `messages:send` goes.
    let endpoint: HTTP2Endpoint
    /// Where assertions are exchanged, and the path there.
    let tokenEndpoint: (endpoint: HTTP2Endpoint, path: String)
    /// The token URI as the assertion's `aud` names it.
    let tokenURI: String

    /// Creates a configuration.
    /// - Parameters:
    ///   - endpointURL: `https://host[:port]`, or `http://host:port` for a local HTTP/2 server.
    ///   - tokenURI: where to exchange assertions; `nil` for the service account's `token_uri`.
    /// - Throws: ``FCMError/invalidEndpoint`` naming the URL that is not one.
    public init(
        serviceAccount: FCMServiceAccount,
        endpointURL: String = FCMConfiguration.productionURL,
        tokenURI: String? = nil,
        requestTimeout: Duration = .seconds(10)
    ) throws(FCMError) {
        self.serviceAccount = serviceAccount
        self.requestTimeout = requestTimeout
        let tokenURI = tokenURI ?? serviceAccount.tokenURI
        do throws(HTTP2ClientError) {
            endpoint = try HTTP2Endpoint(url: endpointURL)
            tokenEndpoint = try HTTP2Endpoint.parse(requestURL: tokenURI)
        } catch {
            throw FCMError(error)
        }
        self.tokenURI = tokenURI
    }
}
