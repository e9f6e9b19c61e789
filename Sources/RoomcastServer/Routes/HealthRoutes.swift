import Hummingbird
import RedisClient

/// `GET /healthz` (the process answers) and `GET /readyz` (it can serve: Redis answers).
struct HealthRoutes {
    let redis: any RedisClientProtocol

    func register(on router: Router<some RequestContext>) {
        router.get("/healthz") { _, _ in
            HealthStatus(status: "ok")
        }
        router.get("/readyz") { _, _ in
            // A short timeout: a load balancer probing a node must not wait on a dead Redis.
            if await redis.ping(timeout: .seconds(1)) {
                return EditedResponse(status: .ok, response: HealthStatus(status: "ready", redis: "up"))
            }
            return EditedResponse(status: .serviceUnavailable, response: HealthStatus(status: "unavailable", redis: "down"))
        }
    }
}

/// The body of the health endpoints.
struct HealthStatus: ResponseEncodable {
    var status: String
    var redis: String?
}
