import HTTPTypes
import Hummingbird
import Metrics
import Synchronization

/// Counts every HTTP request the router answers in `roomcast_http_requests_total{route, status}`:
/// `route` is the matched route's pattern (`/api/rooms/{roomId}`, `/socket.io`), `NotFound` for a
/// path that is no route, so a client cannot grow the label set with its own paths; `status` the
/// answer's code, an error's as rendered. WebSocket upgrades do not reach the router.
///
/// Add it first, so that it also sees what the other middleware answers.
struct HTTPMetricsMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            let response = try await next(request, context)
            HTTPRequestCounters.shared.increment(route: context.endpointPath, status: response.status.code)
            return response
        } catch let error as any HTTPResponseError {
            HTTPRequestCounters.shared.increment(route: context.endpointPath, status: error.status.code)
            throw error
        } catch {
            HTTPRequestCounters.shared.increment(route: context.endpointPath, status: HTTPResponse.Status.internalServerError.code)
            throw error
        }
    }
}

/// One counter per route and status, made on first use and kept: routes are the router's and
/// statuses the few a route answers, so the set stays small.
final class HTTPRequestCounters: Sendable {
    static let shared = HTTPRequestCounters()
    static let label = "roomcast_http_requests_total"

    private struct Key: Hashable {
        let route: String
        let status: Int
    }

    private let counters = Mutex<[Key: Counter]>([:])

    func increment(route: String?, status: Int) {
        let key = Key(route: route ?? "NotFound", status: status)
        let counter = counters.withLock { counters in
            if let counter = counters[key] { return counter }
            let counter = Counter(label: Self.label, dimensions: [("route", key.route), ("status", String(key.status))])
            counters[key] = counter
            return counter
        }
        counter.increment()
    }
}
