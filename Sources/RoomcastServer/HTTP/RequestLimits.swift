import Foundation
import HTTPTypes
import Hummingbird
import RoomcastCore

/// The REST rate limits (`rate.*`), counted in Redis so they hold across nodes: logins per
/// account and per address, registrations per address, and mutations per user. Over a limit the
/// request is 429 `rate_limited` with `Retry-After`.
struct RequestLimits: Sendable {
    struct Settings: Sendable, Equatable {
        var loginsPerAccount = RateLimiter.Limit(requests: 10, per: .seconds(60))
        var loginsPerAddress = RateLimiter.Limit(requests: 100, per: .seconds(60))
        var mutationsPerUser = RateLimiter.Limit(requests: 120, per: .seconds(60))
        /// Take the client's address from the last `X-Forwarded-For` entry (set by the node's
        /// own proxy) instead of the connection's.
        var trustForwardedFor = false
    }

    let limiter: RateLimiter
    let settings: Settings
    private static let forwardedFor = HTTPField.Name("X-Forwarded-For")!

    /// A login (or its attempt) from the request's address.
    func checkLogin(_ request: Request, context: RoomcastRequestContext) async throws(RoomcastError) {
        try await limiter.hit("login:address:\(address(request, context))", settings.loginsPerAddress, what: "login attempts from this address")
    }

    /// A login attempt for `username`: counted whether it exists or not, so the answer tells nothing.
    func checkLogin(account username: String) async throws(RoomcastError) {
        // Only names that could exist get a counter of their own: the key stays small and bounded.
        guard (try? Credentials.validate(username: username)) != nil else { return }
        try await limiter.hit("login:account:\(username.lowercased())", settings.loginsPerAccount, what: "login attempts for this account")
    }

    /// A registration from the request's address (each one a user kept in Redis).
    func checkRegistration(_ request: Request, context: RoomcastRequestContext) async throws(RoomcastError) {
        try await limiter.hit("register:address:\(address(request, context))", settings.loginsPerAddress, what: "registrations from this address")
    }

    /// A change through the REST API by `user`.
    func checkMutation(by user: UserID) async throws(RoomcastError) {
        try await limiter.hit("rest:\(user)", settings.mutationsPerUser, what: "changes through the REST API")
    }

    private func address(_ request: Request, _ context: RoomcastRequestContext) -> String {
        if settings.trustForwardedFor, let client = Self.forwardedClient(request.headers[Self.forwardedFor]) {
            return client
        }
        return context.peerAddress ?? "unknown"
    }

    /// The client address a trusted proxy put in `X-Forwarded-For`: its last entry (the one the
    /// node's own proxy appended; earlier ones are the client's word), when it is a plausible one.
    static func forwardedClient(_ header: String?) -> String? {
        guard let last = header?.split(separator: ",").last?.trimmingCharacters(in: .whitespaces),
            !last.isEmpty, last.utf8.count <= 64
        else { return nil }
        return last
    }
}

/// Counts every REST mutation (any method but GET, HEAD and OPTIONS) of an authenticated user
/// against `rate.rest_mutations_per_user`.
struct MutationLimitMiddleware: RouterMiddleware {
    typealias Context = RoomcastRequestContext
    let limits: RequestLimits

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        if let user = context.userID, ![.get, .head, .options].contains(request.method) {
            try await limits.checkMutation(by: user)
        }
        return try await next(request, context)
    }
}
