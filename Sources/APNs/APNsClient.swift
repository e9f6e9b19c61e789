import Foundation
public import Logging
public import NIOCore
public import NIOPosix
import NIOHPACK
public import PushHTTP2

/// Sends pushes to APNs over one HTTP/2 connection, opened on the first send, shared by
/// concurrent sends (one stream each), and reopened after it closes or fails.
///
/// Not a service: whoever creates the client calls ``shutdown()``.
public final class APNsClient: Sendable {
    private let configuration: APNsConfiguration
    private let logger: Logger
    private let connector: HTTP2Connector
    private let tokens: APNsTokenCache

    /// Creates a client; nothing connects until the first ``send(_:)``.
    public init(
        configuration: APNsConfiguration,
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        logger: Logger
    ) {
        self.configuration = configuration
        self.logger = logger
        connector = HTTP2Connector(endpoint: configuration.endpoint.http2, group: eventLoopGroup, logger: logger)
        tokens = APNsTokenCache(signingKey: configuration.signingKey, keyID: configuration.keyID, teamID: configuration.teamID)
    }

    /// Sends one push and returns APNs's answer, whatever its status.
    ///
    /// Throws only when no HTTP answer came (cannot connect, connection lost, timeout, protocol
    /// error): those are worth retrying. On a `403 ExpiredProviderToken` the token is renewed and
    /// the push sent once more, within the same ``APNsConfiguration/requestTimeout``; only the
    /// second answer is returned.
    public func send(_ request: APNsRequest) async throws(APNsError) -> APNsResponse {
        let deadline = NIODeadline.now() + TimeAmount(configuration.requestTimeout)
        let token = await tokens.token()
        let response = try await deliver(request, token: token, deadline: deadline)
        guard response.status == 403, response.reason == "ExpiredProviderToken" else { return response }
        logger.notice("APNs called the provider token expired; renewing it", metadata: ["apns.id": "\(response.apnsID ?? "-")"])
        let renewed = await tokens.renew(replacing: token)
        return try await deliver(request, token: renewed, deadline: deadline)
    }

    private func deliver(_ request: APNsRequest, token: String, deadline: NIODeadline) async throws(APNsError) -> APNsResponse {
        let response: HTTP2Response
        do throws(HTTP2ClientError) {
            response = try await connector.send(headers: headers(for: request, token: token), body: request.payload, deadline: deadline)
        } catch {
            throw APNsError(error)
        }
        let errorBody = response.body.flatMap { try? JSONDecoder().decode(ErrorBody.self, from: Data($0.readableBytesView)) }
        return APNsResponse(
            status: response.status, reason: errorBody?.reason, apnsID: response.headers.first(name: "apns-id"), timestamp: errorBody?.timestamp
        )
    }

    /// The JSON body APNs sends with an error status.
    private struct ErrorBody: Decodable {
        var reason: String?
        var timestamp: Int?
    }

    private func headers(for request: APNsRequest, token: String) -> HPACKHeaders {
        let endpoint = configuration.endpoint.http2
        var headers: HPACKHeaders = [
            ":method": "POST",
            ":scheme": endpoint.scheme,
            ":authority": endpoint.authority,
            ":path": "/3/device/\(request.deviceToken)",
            "authorization": "bearer \(token)",
            "apns-topic": configuration.topic,
            "apns-push-type": request.pushType,
            "apns-priority": String(request.priority),
            "content-type": "application/json",
            "content-length": String(request.payload.readableBytes),
        ]
        if let expiration = request.expiration { headers.add(name: "apns-expiration", value: String(expiration)) }
        if let collapseID = request.collapseID { headers.add(name: "apns-collapse-id", value: collapseID) }
        if let apnsID = request.apnsID { headers.add(name: "apns-id", value: apnsID) }
        return headers
    }

    /// Closes the connection; sends in flight fail with ``APNsError/connectionClosed``, and so
    /// does every later send.
    public func shutdown() async {
        await connector.shutdown()
    }

    /// The connection in use, if any, for tests that wait for it to close.
    var currentConnection: HTTP2Connection? {
        get async { await connector.currentConnection }
    }
}
