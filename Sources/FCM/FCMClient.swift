import Foundation
public import Logging
public import NIOCore
public import NIOPosix
import NIOHPACK
public import PushHTTP2

/// Sends pushes through FCM's HTTP v1 API: exchanges the service account's signed assertion for
/// an OAuth access token (cached, renewed before it expires), then posts each message to
/// `messages:send` on one HTTP/2 connection shared by concurrent sends.
///
/// Not a service: whoever creates the client calls ``shutdown()``.
public final class FCMClient: Sendable {
    private let configuration: FCMConfiguration
    private let logger: Logger
    private let fcm: HTTP2Connector
    private let oauth: HTTP2Connector
    private let tokens: FCMAccessTokenCache

    /// Creates a client; nothing connects until the first ``send(_:)``.
    public convenience init(
        configuration: FCMConfiguration,
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        logger: Logger
    ) {
        self.init(configuration: configuration, eventLoopGroup: eventLoopGroup, logger: logger, now: { Date() })
    }

    /// Creates a client whose token cache reads `now`, for tests that move time by hand.
    init(configuration: FCMConfiguration, eventLoopGroup: any EventLoopGroup, logger: Logger, now: @escaping @Sendable () -> Date) {
        self.configuration = configuration
        self.logger = logger
        let fcm = HTTP2Connector(endpoint: configuration.endpoint, group: eventLoopGroup, logger: logger)
        let oauth =
            configuration.tokenEndpoint.endpoint == configuration.endpoint
            ? fcm : HTTP2Connector(endpoint: configuration.tokenEndpoint.endpoint, group: eventLoopGroup, logger: logger)
        self.fcm = fcm
        self.oauth = oauth
        tokens = FCMAccessTokenCache(now: now) { deadline async throws(FCMError) in
            try await FCMClient.exchange(configuration: configuration, connector: oauth, now: now, deadline: deadline, logger: logger)
        }
    }

    /// Sends one push and returns FCM's answer, whatever its status.
    ///
    /// Throws when no answer from FCM came (cannot connect, connection lost, timeout, protocol
    /// error) or no access token could be had: those are worth retrying. On a `401` the access
    /// token is dropped and the push sent once more with a new one, within the same
    /// ``FCMConfiguration/requestTimeout``; only the second answer is returned.
    public func send(_ request: FCMRequest) async throws(FCMError) -> FCMResponse {
        let deadline = NIODeadline.now() + TimeAmount(configuration.requestTimeout)
        let token = try await tokens.token(deadline: deadline)
        let response = try await deliver(request, token: token, deadline: deadline)
        guard response.status == 401 else { return response }
        logger.notice("FCM refused the access token; renewing it", metadata: ["fcm.status": "\(response.errorStatus ?? "-")"])
        let renewed = try await tokens.renew(replacing: token, deadline: deadline)
        return try await deliver(request, token: renewed, deadline: deadline)
    }

    private func deliver(_ request: FCMRequest, token: String, deadline: NIODeadline) async throws(FCMError) -> FCMResponse {
        let endpoint = configuration.endpoint
        let headers: HPACKHeaders = [
            ":method": "POST",
            ":scheme": endpoint.scheme,
            ":authority": endpoint.authority,
            ":path": "/v1/projects/\(configuration.serviceAccount.projectID)/messages:send",
            "authorization": "Bearer \(token)",
            "content-type": "application/json; charset=UTF-8",
            "content-length": String(request.body.readableBytes),
        ]
        let response: HTTP2Response
        do throws(HTTP2ClientError) {
            response = try await fcm.send(headers: headers, body: request.body, deadline: deadline)
        } catch {
            throw FCMError(error)
        }
        let body = response.body.flatMap { try? JSONDecoder().decode(SendBody.self, from: Data($0.readableBytesView)) }
        let errorCode = body?.error?.details?.first { $0.type?.hasSuffix("google.firebase.fcm.v1.FcmError") == true }?.errorCode
        return FCMResponse(
            status: response.status, errorStatus: body?.error?.status, errorCode: errorCode, message: body?.error?.message, name: body?.name
        )
    }

    /// Exchanges a fresh assertion for an access token at the token URI.
    private static func exchange(
        configuration: FCMConfiguration, connector: HTTP2Connector, now: @Sendable () -> Date, deadline: NIODeadline, logger: Logger
    ) async throws(FCMError) -> (token: String, lifetime: Duration) {
        let account = configuration.serviceAccount
        let assertion = account.assertion(audience: configuration.tokenURI, issuedAt: Int(now().timeIntervalSince1970))
        // The assertion is base64url and dots: nothing in it needs escaping in a form.
        let body = ByteBuffer(string: "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=\(assertion)")
        let (endpoint, path) = configuration.tokenEndpoint
        let headers: HPACKHeaders = [
            ":method": "POST",
            ":scheme": endpoint.scheme,
            ":authority": endpoint.authority,
            ":path": path,
            "content-type": "application/x-www-form-urlencoded",
            "content-length": String(body.readableBytes),
        ]
        let response: HTTP2Response
        do throws(HTTP2ClientError) {
            response = try await connector.send(headers: headers, body: body, deadline: deadline)
        } catch {
            throw FCMError(error).prefixed("token exchange at \(configuration.tokenURI)")
        }
        let answer = response.body.flatMap { try? JSONDecoder().decode(TokenBody.self, from: Data($0.readableBytesView)) }
        guard response.status == 200, let token = answer?.access_token, !token.isEmpty else {
            // Google's error fields say why (`invalid_grant`, a clock skew …); they hold no secret.
            let reason = [answer?.error, answer?.error_description].compactMap { $0 }.joined(separator: ": ")
            throw FCMError.authenticationFailed.with(
                "\(configuration.tokenURI) answered \(response.status)\(reason.isEmpty ? "" : " \(reason)") for \(account)"
            )
        }
        // Google gives an hour; a missing or odd lifetime is taken as a minute, so it is asked again soon.
        let seconds = answer?.expires_in ?? 60
        logger.debug("FCM access token obtained", metadata: ["fcm.expires_in": "\(seconds)"])
        return (token, .seconds(max(seconds, 1)))
    }

    /// Closes the connections; sends in flight fail with ``FCMError/connectionClosed``, and so
    /// does every later send.
    public func shutdown() async {
        await fcm.shutdown()
        await oauth.shutdown()
    }

    /// `{"name": …}` on success, `{"error": {code, message, status, details}}` otherwise.
    private struct SendBody: Decodable {
        struct Failure: Decodable {
            var message: String?
            var status: String?
            var details: [Detail]?
        }
        struct Detail: Decodable {
            var type: String?
            var errorCode: String?
            enum CodingKeys: String, CodingKey {
                case type = "@type"
                case errorCode
            }
        }
        var name: String?
        var error: Failure?
    }

    /// The token endpoint's answer: `access_token`, `expires_in`, or `error`, `error_description`.
    private struct TokenBody: Decodable {
        var access_token: String?
        var expires_in: Int?
        var error: String?
        var error_description: String?
    }
}
