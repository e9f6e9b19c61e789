import Metrics
@testable import RedisClient
import Testing

@Suite("RedisCommandMetrics: labels")
struct RedisCommandMetricsTests {
    @Test("the client's metrics carry no product name; an application puts its own prefix before them")
    func labels() {
        let plain = RedisCommandMetrics(prefix: "").instruments(for: "GET")
        #expect(plain.duration.label == "redis_command_duration_seconds")
        #expect(plain.errors.label == "redis_command_errors_total")
        #expect(plain.duration.dimensions.first { $0.0 == "command" }?.1 == "get")
        let prefixed = RedisCommandMetrics(prefix: "myapp_").instruments(for: "element_create")
        #expect(prefixed.duration.label == "myapp_redis_command_duration_seconds")
        #expect(prefixed.errors.label == "myapp_redis_command_errors_total")
        #expect(RedisConfiguration().metricsPrefix == "")
    }
}
