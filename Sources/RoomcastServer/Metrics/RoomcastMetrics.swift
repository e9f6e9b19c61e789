import Metrics
import Prometheus
import Synchronization

/// The node's metrics in Prometheus's text format, for `GET /metrics`.
///
/// ``bootstrap()`` makes swift-metrics (`Counter`, `Meter`, `Timer` …) record into one
/// Prometheus registry that the route renders. Without it (tests that run a gateway in-process)
/// every instrument is swift-metrics' no-op and `/metrics` answers an empty body.
public enum RoomcastMetrics {
    /// The registry `/metrics` renders.
    static let registry = PrometheusCollectorRegistry()
    private static let isBootstrapped = Atomic<Bool>(false)

    /// Records every swift-metrics instrument made from now on in the registry; once per process
    /// (later calls do nothing).
    public static func bootstrap() {
        guard isBootstrapped.compareExchange(expected: false, desired: true, ordering: .relaxed).exchanged else { return }
        MetricsSystem.bootstrap(Factory(registry: registry))
        GatewayMetrics.prepare()
    }

    /// The exposition text (format 0.0.4) of every metric recorded so far.
    static func exposition() -> [UInt8] {
        registry.emitToBuffer()
    }

    /// The `# HELP` text of each of Roomcast's metrics; every metric has one (the exposition
    /// test checks it).
    static let help: [String: String] = [
        "roomcast_sockets_connected": "Socket.IO sockets connected (CONNECT accepted) to this node, by transport.",
        "roomcast_channels_subscribed": "Redis pub/sub channels this node is subscribed to for its local sockets, by kind (room or user).",
        "roomcast_events_received_total": "Socket.IO events received from clients, by event name (unknown names count as 'unknown').",
        "roomcast_frames_delivered_total": "Frames of published events handed to local sockets (one per recipient socket).",
        "roomcast_fanout_flushes_total": "Socket flushes (writev) of delivered frames: one per socket per write batch.",
        "roomcast_fanout_latency_seconds":
            "Time from this node's subscriber reading a published event off its Redis pub/sub connection to its frame being handed to the local recipients of one event loop (written, or queued behind frames waiting); excludes the time from PUBLISH to that read.",
        "roomcast_redis_command_duration_seconds": "Redis command duration from the call to the reply (the wait for a connection included), by command or script name.",
        "roomcast_redis_command_errors_total": "Redis commands that failed (error reply, timeout, lost connection), by command or script name.",
        "roomcast_pubsub_reconnects_total": "Times the Redis pub/sub connection was made again after it was lost.",
        "roomcast_gap_repairs_total": "Channels (rooms and users) whose missed events were read back from their stream after a pub/sub reconnect.",
        "roomcast_gap_closes_total":
            "Channels (rooms and users) whose missed events could not be read back after a pub/sub reconnect (no longer all in their stream, or Redis refused for pubsub.gap_read_timeout_ms): their local sockets were closed, to reconnect and recover by offset.",
        "roomcast_rejected_inputs_total": "Client input answered with an error, by error code and source (socket or http).",
        "roomcast_push_jobs_total": "Push jobs handled by this node's push worker, by outcome.",
        "roomcast_push_delivery_latency_seconds": "Time from a push job's entry in the outbox to the push service accepting it, retries included.",
        "roomcast_socket_connects_total": "Socket.IO CONNECTs accepted by this node.",
        "roomcast_socket_disconnects_total": "Socket.IO sockets that left this node, by reason (transport_close, ping_timeout, server_shutting_down ...).",
        "roomcast_http_requests_total": "HTTP requests answered by this node's router, by route pattern and status code (WebSocket upgrades excluded).",
        "roomcast_build_info": "Always 1; the version label is this node's build.",
        "roomcast_process_cpu_seconds_total": "User and system CPU time of the node's process, in seconds.",
        "roomcast_process_resident_memory_bytes": "Resident memory of the node's process, in bytes.",
        "roomcast_process_open_fds": "File descriptors the node's process holds open (one per connection, among others).",
        "roomcast_process_max_fds": "The node's limit of open file descriptors (soft limit).",
    ]

    /// Histogram buckets per metric: fan-out and Redis commands take microseconds to
    /// milliseconds here, far below swift-prometheus's default first bucket of 5 ms.
    static let buckets: [String: [Duration]] = [
        "roomcast_fanout_latency_seconds": fastBuckets,
        "roomcast_redis_command_duration_seconds": fastBuckets,
        "roomcast_push_delivery_latency_seconds": pushBuckets,
    ]

    /// A push is accepted in tens of milliseconds to seconds, or minutes later after retries.
    private static let pushBuckets: [Duration] = [
        .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1), .milliseconds(2500),
        .seconds(5), .seconds(10), .seconds(30), .seconds(60), .seconds(300), .seconds(900),
    ]

    private static let fastBuckets: [Duration] = [
        .microseconds(50), .microseconds(100), .microseconds(250), .microseconds(500),
        .milliseconds(1), .milliseconds(2), .milliseconds(5), .milliseconds(10), .milliseconds(25),
        .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1),
        .milliseconds(2500), .seconds(5),
    ]

    /// swift-prometheus's factory with our `# HELP` texts and buckets: its own factory registers
    /// every metric without help text.
    struct Factory: MetricsFactory {
        let registry: PrometheusCollectorRegistry
        private let base: PrometheusMetricsFactory

        init(registry: PrometheusCollectorRegistry) {
            self.registry = registry
            var base = PrometheusMetricsFactory(registry: registry)
            base.durationHistogramBuckets = RoomcastMetrics.buckets
            self.base = base
        }

        func makeCounter(label: String, dimensions: [(String, String)]) -> any CounterHandler {
            guard let name = descriptor(label) else { return base.makeCounter(label: label, dimensions: dimensions) }
            return registry.makeCounter(descriptor: name, labels: dimensions)
        }

        func makeFloatingPointCounter(label: String, dimensions: [(String, String)]) -> any FloatingPointCounterHandler {
            guard let name = descriptor(label) else { return base.makeFloatingPointCounter(label: label, dimensions: dimensions) }
            return registry.makeCounter(descriptor: name, labels: dimensions)
        }

        func makeRecorder(label: String, dimensions: [(String, String)], aggregate: Bool) -> any RecorderHandler {
            guard let name = descriptor(label), !aggregate else { return base.makeRecorder(label: label, dimensions: dimensions, aggregate: aggregate) }
            return registry.makeGauge(descriptor: name, labels: dimensions)
        }

        func makeMeter(label: String, dimensions: [(String, String)]) -> any MeterHandler {
            guard let name = descriptor(label) else { return base.makeMeter(label: label, dimensions: dimensions) }
            return registry.makeGauge(descriptor: name, labels: dimensions)
        }

        func makeTimer(label: String, dimensions: [(String, String)]) -> any TimerHandler {
            guard let name = descriptor(label) else { return base.makeTimer(label: label, dimensions: dimensions) }
            let buckets = RoomcastMetrics.buckets[label] ?? base.defaultDurationHistogramBuckets
            return registry.makeDurationHistogram(descriptor: name, labels: dimensions, buckets: buckets)
        }

        func destroyCounter(_ handler: any CounterHandler) { base.destroyCounter(handler) }
        func destroyFloatingPointCounter(_ handler: any FloatingPointCounterHandler) { base.destroyFloatingPointCounter(handler) }
        func destroyRecorder(_ handler: any RecorderHandler) { base.destroyRecorder(handler) }
        func destroyMeter(_ handler: any MeterHandler) { base.destroyMeter(handler) }
        func destroyTimer(_ handler: any TimerHandler) { base.destroyTimer(handler) }

        /// Our metric `label` with its help text; nil for a metric of another library.
        private func descriptor(_ label: String) -> MetricNameDescriptor? {
            // The whole name as `metricName` (with an empty unit the name is exactly `label`).
            RoomcastMetrics.help[label].map { MetricNameDescriptor(metricName: label, unitName: "", helpText: $0) }
        }
    }
}
