import Foundation
import NIOCore
import Synchronization

/// A ``LocalHTTP2Server`` standing in for both of Google's endpoints: `POST /token` exchanges a
/// service account's assertion (verified with the account's public key) for an access token,
/// and `POST /v1/projects/<project>/messages:send` checks that token before it asks the test's
/// `respond` what to answer. A send with a token it did not issue, or one revoked by
/// ``revokeAccessTokens()``, is answered `401 UNAUTHENTICATED` without asking.
public final class LocalFCMServer: Sendable {
    /// The path of the token endpoint.
    public static let tokenPath = "/token"

    /// An exchange the stand-in answered.
    public struct Exchange: Sendable {
        /// The verified claims, or `nil` when the assertion did not verify (answered 400).
        public var claims: FCMTestAccount.Claims?
        /// Why it did not verify.
        public var failure: String?
        /// The access token handed out.
        public var accessToken: String?
    }

    /// A `messages:send` request that carried a valid access token.
    public struct Message: Sendable {
        /// The request as read.
        public var request: HTTP2RecordedRequest
        /// The access token it carried.
        public var accessToken: String
        /// The body.
        public var json: JSONValue
        /// `message.token`.
        public var token: String { json["message"]["token"].stringValue ?? "" }
    }

    private struct State {
        var exchanges: [Exchange] = []
        var messages: [Message] = []
        var valid: Set<String> = []
        var unauthorized = 0
        var expiresIn: Int
        var port = 0
    }

    /// What the stand-in saw and handed out; shared with the tasks that serve, read by the test
    /// without awaiting.
    private final class Log: Sendable {
        let state: Mutex<State>

        init(expiresIn: Int) {
            state = Mutex(State(expiresIn: expiresIn))
        }
    }

    /// The service account whose assertions verify.
    public let account: FCMTestAccount
    private let server: LocalHTTP2Server
    private let log: Log

    private init(account: FCMTestAccount, server: LocalHTTP2Server, log: Log) {
        self.account = account
        self.server = server
        self.log = log
    }

    /// Starts on 127.0.0.1.
    /// - Parameters:
    ///   - expiresIn: the `expires_in` of the access tokens it hands out, in seconds.
    ///   - respond: the answer to each authorised `messages:send`; may await (to hang, say).
    public static func start(
        account: FCMTestAccount,
        expiresIn: Int = 3600,
        respond: @escaping @Sendable (Message) async -> HTTP2StubResponse
    ) async throws -> LocalFCMServer {
        let log = Log(expiresIn: expiresIn)
        let server = try await LocalHTTP2Server.start { request in
            if request.path == tokenPath {
                return exchange(request, account: account, tokenURI: "http://127.0.0.1:\(log.state.withLock { $0.port })\(tokenPath)", log: log)
            }
            guard request.method == "POST", request.path == "/v1/projects/\(account.projectID)/messages:send" else {
                return fcmError(status: 404, canonical: "NOT_FOUND", message: "no such method: \(request.path)")
            }
            let bearer = request.headers["authorization"] ?? ""
            let accessToken = bearer.hasPrefix("Bearer ") ? String(bearer.dropFirst("Bearer ".count)) : ""
            let authorised = log.state.withLock { state in
                guard state.valid.contains(accessToken) else {
                    state.unauthorized += 1
                    return false
                }
                return true
            }
            guard authorised else {
                return fcmError(status: 401, canonical: "UNAUTHENTICATED", message: "Request had invalid authentication credentials.")
            }
            let json = (try? JSONValue(String(buffer: request.body))) ?? .null
            let message = Message(request: request, accessToken: accessToken, json: json)
            log.state.withLock { $0.messages.append(message) }
            return await respond(message)
        }
        log.state.withLock { $0.port = server.port }
        return LocalFCMServer(account: account, server: server, log: log)
    }

    private static func exchange(_ request: HTTP2RecordedRequest, account: FCMTestAccount, tokenURI: String, log: Log) -> HTTP2StubResponse {
        let form = Dictionary(
            String(buffer: request.body).split(separator: "&").map { pair in
                let parts = pair.split(separator: "=", maxSplits: 1)
                return (String(parts[0]), parts.count == 2 ? String(parts[1]).removingPercentEncoding ?? "" : "")
            },
            uniquingKeysWith: { $1 }
        )
        var exchange = Exchange()
        do {
            guard request.method == "POST", request.headers["content-type"] == "application/x-www-form-urlencoded" else {
                throw JWTPartsError("not a form POST: \(request.method) \(request.headers["content-type"] ?? "-")")
            }
            guard form["grant_type"] == "urn:ietf:params:oauth:grant-type:jwt-bearer" else {
                throw JWTPartsError("grant_type is \(form["grant_type"] ?? "missing")")
            }
            exchange.claims = try account.verify(assertion: Substring(form["assertion"] ?? ""), tokenURI: tokenURI)
        } catch {
            exchange.failure = "\(error)"
            log.state.withLock { $0.exchanges.append(exchange) }
            return HTTP2StubResponse(status: 400, body: #"{"error":"invalid_grant","error_description":"Invalid JWT Signature."}"#)
        }
        let (token, expiresIn) = log.state.withLock { state in
            let token = "ya29.test-\(state.exchanges.count + 1)-\(UUID().uuidString)"
            exchange.accessToken = token
            state.exchanges.append(exchange)
            state.valid.insert(token)
            return (token, state.expiresIn)
        }
        return HTTP2StubResponse(status: 200, body: #"{"access_token":"\#(token)","expires_in":\#(expiresIn),"token_type":"Bearer"}"#)
    }

    /// `200 {"name": "projects/<project>/messages/<id>"}`: FCM accepted the message.
    public static func accepted(_ message: Message) -> HTTP2StubResponse {
        HTTP2StubResponse(status: 200, body: #"{"name":"\#(message.request.path.dropFirst("/v1/".count).dropLast(":send".count))/0:\#(UInt32.random(in: 1...UInt32.max))"}"#)
    }

    /// An error answer as Google shapes it, with an `FcmError` detail when `errorCode` is set.
    public static func fcmError(status: Int, canonical: String, errorCode: String? = nil, message: String = "error") -> HTTP2StubResponse {
        let details = errorCode.map { #","details":[{"@type":"type.googleapis.com/google.firebase.fcm.v1.FcmError","errorCode":"\#($0)"}]"# } ?? ""
        return HTTP2StubResponse(
            status: status, body: #"{"error":{"code":\#(status),"message":"\#(message)","status":"\#(canonical)"\#(details)}}"#
        )
    }

    /// `404 NOT_FOUND` with `UNREGISTERED`: the token is no longer valid.
    public static let unregistered = fcmError(status: 404, canonical: "NOT_FOUND", errorCode: "UNREGISTERED", message: "Requested entity was not found.")

    /// The port it listens on.
    public var port: Int { server.port }
    /// `http://127.0.0.1:<port>`, the FCM endpoint.
    public var url: String { server.url }
    /// The token endpoint's URL, the service account's `token_uri`.
    public var tokenURI: String { server.url + Self.tokenPath }
    /// The service account's key file, pointing at this stand-in.
    public var serviceAccountJSON: String { account.json(tokenURI: tokenURI) }

    /// Every exchange so far.
    public func exchanges() -> [Exchange] { log.state.withLock { $0.exchanges } }
    /// Every authorised `messages:send` so far.
    public func messages() -> [Message] { log.state.withLock { $0.messages } }
    /// How many sends came with a token it did not accept.
    public func unauthorizedCount() -> Int { log.state.withLock { $0.unauthorized } }
    /// Every request, token exchanges included.
    public func recordedRequests() -> [HTTP2RecordedRequest] { server.recordedRequests() }
    /// How many connections clients have opened so far.
    public func connectionCount() -> Int { server.connectionCount() }

    /// Stops accepting the access tokens handed out so far, as Google does when one expires early.
    public func revokeAccessTokens() {
        log.state.withLock { $0.valid.removeAll() }
    }

    /// Stops listening and closes every connection.
    public func shutdown() async throws { try await server.shutdown() }
}
