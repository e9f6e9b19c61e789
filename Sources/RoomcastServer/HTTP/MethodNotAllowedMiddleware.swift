import HTTPTypes
import Hummingbird
import RoomcastCore

/// Turns the router's 404 for a path that exists under other methods into 405
/// `method_not_allowed` with `Allow` (RFC 9110 §15.5.6): `TRACE /healthz` or `DELETE /api/rooms`
/// are not unknown resources.
///
/// Add it to the router after every route: Hummingbird applies a middleware to the routes added
/// after it and to the not-found responder, which it builds with every middleware when the router
/// becomes a responder. Added last, this one wraps the not-found responder only, inside
/// ``ErrorMiddleware``, and never runs for a request a route answers.
struct MethodNotAllowedMiddleware: RouterMiddleware {
    typealias Context = RoomcastRequestContext

    /// One route path's components (`nil` for a `{parameter}`) and the methods it is served with.
    private let routes: [(components: [Substring?], methods: Set<String>)]

    /// - Parameter routes: every route of the router, as `Router.routes` lists them.
    init(routes: [Router<RoomcastRequestContext>.RouteDescription]) {
        var methods: [String: Set<String>] = [:]
        for route in routes {
            methods[route.path.description, default: []].insert(route.method.rawValue)
        }
        self.routes = methods.map { path, methods in
            (Self.components(path).map { $0.hasPrefix("{") || $0.hasPrefix(":") ? nil : $0 }, methods)
        }
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as HTTPError where error.status == .notFound {
            let allowed = allowedMethods(for: request.uri.path)
            guard !allowed.isEmpty else { throw error }
            GatewayMetrics.httpRejections.increment(RoomcastError.Code.methodNotAllowed.rawValue)
            let refusal = RoomcastError(.methodNotAllowed, "\(request.method) is not served at \(request.uri.path); allowed: \(allowed.joined(separator: ", "))")
            var response = try refusal.response(from: request, context: context)
            response.headers[.allow] = allowed.joined(separator: ", ")
            return response
        }
    }

    /// The methods of the routes whose path matches `path`, sorted; empty when none does.
    func allowedMethods(for path: String) -> [String] {
        let requested = Self.components(path)
        var allowed: Set<String> = []
        for route in routes where route.components.count == requested.count {
            if zip(route.components, requested).allSatisfy({ pattern, component in pattern == nil || pattern == component }) {
                allowed.formUnion(route.methods)
            }
        }
        return allowed.sorted()
    }

    /// A path's components, as the router matches them (empty ones, as from a trailing `/`, skipped).
    private static func components(_ path: String) -> [Substring] {
        path.split(separator: "/", omittingEmptySubsequences: true)
    }
}
