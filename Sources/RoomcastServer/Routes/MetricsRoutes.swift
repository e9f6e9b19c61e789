import Hummingbird
import NIOCore

/// `GET /metrics`: the node's metrics in Prometheus's text exposition format (0.0.4), outside
/// the API's authentication like the health endpoints.
struct MetricsRoutes {
    /// The content type Prometheus expects for the text format.
    static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    func register(on router: Router<some RequestContext>) {
        router.get("/metrics") { _, _ in
            ProcessMetrics.update()
            return Response(
                status: .ok,
                headers: [.contentType: Self.contentType],
                body: ResponseBody(byteBuffer: ByteBuffer(bytes: RoomcastMetrics.exposition()))
            )
        }
    }
}
