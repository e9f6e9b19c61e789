import Foundation
import HTTPTypes
import Hummingbird

/// Cross-origin access for browser clients (`http.cors_origins`): long-polling and the REST API
/// answer the origins listed, with credentials, and preflight requests are answered here.
/// Requests from other origins are served without the headers, so browsers keep them from
/// pages of those origins; non-browser clients never send `Origin` and see no difference.
struct CORSMiddleware: RouterMiddleware {
    typealias Context = RoomcastRequestContext

    let origins: CORSOrigins

    func handle(
        _ request: Request,
        context: RoomcastRequestContext,
        next: (Request, RoomcastRequestContext) async throws -> Response
    ) async throws -> Response {
        guard let origin = request.headers[.origin], origins.allows(origin) else {
            return try await next(request, context)
        }
        if request.method == .options, request.headers[.accessControlRequestMethod] != nil {
            var headers = Self.headers(for: origin)
            headers[.accessControlAllowMethods] = "GET, POST, PUT, PATCH, DELETE, OPTIONS"
            headers[.accessControlAllowHeaders] = request.headers[.accessControlRequestHeaders] ?? "Authorization, Content-Type"
            headers[.accessControlMaxAge] = "600"
            return Response(status: .noContent, headers: headers)
        }
        var response: Response
        do {
            response = try await next(request, context)
        } catch let error as any HTTPResponseError {
            // Rendered here so that error answers carry the headers too: without them a browser
            // hides the error body from the page.
            response = try error.response(from: request, context: context)
        }
        for field in Self.headers(for: origin) { response.headers[field.name] = field.value }
        return response
    }

    private static func headers(for origin: String) -> HTTPFields {
        [
            .accessControlAllowOrigin: origin,
            .accessControlAllowCredentials: "true",
            .vary: "Origin",
        ]
    }
}

/// The origins allowed to call the gateway from a browser.
public struct CORSOrigins: Sendable, Equatable {
    /// Any origin (`*` in the setting).
    public var any: Bool
    /// Exact origins (`https://app.example.com`), compared without a trailing slash.
    public var listed: Set<String>

    /// No cross-origin access: the default.
    public static let none = CORSOrigins(any: false, listed: [])

    /// - Parameters:
    ///   - any: allow every origin.
    ///   - listed: the origins allowed.
    public init(any: Bool, listed: Set<String>) {
        self.any = any
        self.listed = listed
    }

    /// Parses the setting: origins separated by commas, or `*`.
    /// - Returns: `nil` when an entry is not an `http(s)://host[:port]` origin.
    public init?(setting: String) {
        var any = false
        var listed: Set<String> = []
        for entry in setting.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }) where !entry.isEmpty {
            if entry == "*" {
                any = true
                continue
            }
            let origin = entry.hasSuffix("/") ? String(entry.dropLast()) : entry
            guard origin.hasPrefix("http://") || origin.hasPrefix("https://"),
                !origin.dropFirst(origin.hasPrefix("https://") ? 8 : 7).contains("/"), origin.count > 8
            else { return nil }
            listed.insert(origin)
        }
        self.init(any: any, listed: listed)
    }

    /// True when no origin is allowed.
    public var isEmpty: Bool { !any && listed.isEmpty }

    func allows(_ origin: String) -> Bool {
        any || listed.contains(origin.hasSuffix("/") ? String(origin.dropLast()) : origin)
    }
}
