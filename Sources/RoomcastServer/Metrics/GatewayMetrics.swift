import Foundation
import Metrics
import NIOCore
import RoomcastCore
import SocketIOServer

/// The gateway's instruments, each made once (on first use, after ``RoomcastMetrics/bootstrap()``)
/// and kept: nothing on a hot path builds a label or looks a metric up in the registry.
enum GatewayMetrics {
    /// Makes every instrument now, so that each series is scraped from the start (at 0) rather
    /// than appearing with its first event.
    static func prepare() {
        _ = (socketsOverWebSocket, socketsOverPolling, roomChannels, nodeChannels, framesDelivered, fanoutFlushes, fanoutLatency, gapRepairs, gapsClosed)
        _ = (eventsReceived, socketRejections, httpRejections, pushJobs, socketConnects, socketDisconnects, pushDeliveryLatency)
        RoomcastBuild.info.set(1)
        ProcessMetrics.update()
    }

    /// `roomcast_sockets_connected{transport}`: sockets whose CONNECT was accepted, until they leave.
    static let socketsOverWebSocket = Meter(label: "roomcast_sockets_connected", dimensions: [("transport", "websocket")])
    static let socketsOverPolling = Meter(label: "roomcast_sockets_connected", dimensions: [("transport", "polling")])

    /// `roomcast_channels_subscribed{kind}`: pub/sub channels the node holds: a room's while it
    /// has sockets there, and its own channels of per-user events (one per slot) while their
    /// links are up.
    static let roomChannels = Meter(label: "roomcast_channels_subscribed", dimensions: [("kind", "room")])
    static let nodeChannels = Meter(label: "roomcast_channels_subscribed", dimensions: [("kind", "node")])

    /// `roomcast_frames_delivered_total`: counted once per fan-out batch, by its size.
    static let framesDelivered = Counter(label: "roomcast_frames_delivered_total")

    /// `roomcast_fanout_flushes_total`: socket flushes of delivered frames; with
    /// `roomcast_frames_delivered_total`, how many frames a `writev` carries on average.
    static let fanoutFlushes = Counter(label: "roomcast_fanout_flushes_total")

    /// `roomcast_fanout_latency_seconds`: subscriber read → frames written, per event loop.
    static let fanoutLatency = Metrics.Timer(label: "roomcast_fanout_latency_seconds")

    /// Records a fan-out that began (the subscriber read its message) at `start`.
    static func fanoutWritten(since start: NIODeadline) {
        fanoutLatency.recordNanoseconds((NIODeadline.now() - start).nanoseconds)
    }

    /// `roomcast_gap_repairs_total`.
    static let gapRepairs = Counter(label: "roomcast_gap_repairs_total")

    /// `roomcast_gap_closes_total`.
    static let gapsClosed = Counter(label: "roomcast_gap_closes_total")

    /// `roomcast_events_received_total{event}`, one counter per event the node handles and one
    /// for every other name.
    static let eventsReceived = LabeledCounters(
        label: "roomcast_events_received_total", dimension: "event",
        known: SocketEventRouter.eventNames, other: "unknown"
    )

    /// `roomcast_rejected_inputs_total{code, source="socket"}`: `malformed_packet` counts the
    /// connections closed for input that cannot be decoded, `invalid_namespace` the CONNECTs to a
    /// namespace the gateway does not serve.
    static let socketRejections = LabeledCounters(
        label: "roomcast_rejected_inputs_total", dimension: "code", fixed: [("source", "socket")],
        known: errorCodes + ["invalid_namespace"], other: "other"
    )
    /// `roomcast_rejected_inputs_total{code, source="http"}`.
    static let httpRejections = LabeledCounters(
        label: "roomcast_rejected_inputs_total", dimension: "code", fixed: [("source", "http")],
        known: errorCodes, other: "other"
    )

    /// The error catalogue (docs/clients/errors.md).
    private static let errorCodes: [String] = [
        RoomcastError.Code.invalidPayload, .malformedPacket, .binaryNotSupported, .unknownEvent, .unauthorized, .tokenExpired,
        .forbidden, .notFound, .methodNotAllowed, .conflict, .payloadTooLarge, .limitExceeded, .rateLimited, .unavailable,
        .internalError,
    ].map(\.rawValue)

    /// `roomcast_socket_connects_total`: CONNECTs accepted (refused ones count in
    /// `roomcast_rejected_inputs_total`).
    static let socketConnects = Counter(label: "roomcast_socket_connects_total")

    /// `roomcast_socket_disconnects_total{reason}`: sockets that left, by Socket.IO's reason in
    /// snake case (`transport_close`, `ping_timeout`, `server_shutting_down` …).
    static let socketDisconnects = LabeledCounters(
        label: "roomcast_socket_disconnects_total", dimension: "reason",
        known: disconnectReasons.map(metricValue), other: "other"
    )

    /// Every reason a socket leaves for.
    static let disconnectReasons: [SocketIODisconnectReason] = [
        .clientNamespaceDisconnect, .serverNamespaceDisconnect, .transportClose, .pingTimeout, .parseError, .serverShuttingDown,
        .deadline, .forcedClose,
    ]

    /// A reason as a label value: `transport close` → `transport_close`.
    static func metricValue(_ reason: SocketIODisconnectReason) -> String {
        reason.description.replacingOccurrences(of: " ", with: "_")
    }

    /// `roomcast_push_delivery_latency_seconds`: from a push job's entry in the outbox (its
    /// stream id's time) to the push service accepting it, retries included.
    static let pushDeliveryLatency = Metrics.Timer(label: "roomcast_push_delivery_latency_seconds")

    /// Records the delivery of the job whose outbox entry id is `id` (`<epoch ms>-<seq>`).
    static func pushDelivered(jobID id: String, now: Date = .now) {
        guard let enqueued = id.split(separator: "-").first.flatMap({ Int64($0) }) else { return }
        let elapsed = Int64(now.timeIntervalSince1970 * 1_000) - enqueued
        // Redis's clock and this node's may differ a little: never a negative latency.
        pushDeliveryLatency.recordMilliseconds(max(elapsed, 0))
    }

    /// `roomcast_push_jobs_total{outcome}`.
    static let pushJobs = LabeledCounters(
        label: "roomcast_push_jobs_total", dimension: "outcome",
        known: PushJobOutcome.allCases.map(\.rawValue), other: "other"
    )
}

/// What became of a push job the worker took.
enum PushJobOutcome: String, CaseIterable {
    /// APNs accepted it.
    case delivered
    /// APNs said the device token is gone; the token was removed.
    case unregistered
    /// Failed for now; another attempt follows later.
    case retried
    /// Given up on: moved to the dead-letter stream.
    case deadLettered = "dead_lettered"
}

/// Counters of one metric that differ in one label whose values are known up front: made once,
/// looked up by value without a lock; any value not known counts under `other`.
struct LabeledCounters: Sendable {
    private let counters: [String: Counter]
    private let other: Counter

    init(label: String, dimension: String, fixed: [(String, String)] = [], known: [String], other: String) {
        var counters: [String: Counter] = [:]
        for value in known {
            counters[value] = Counter(label: label, dimensions: [(dimension, value)] + fixed)
        }
        self.counters = counters
        self.other = Counter(label: label, dimensions: [(dimension, other)] + fixed)
    }

    /// Counts one (or `amount`) under label value `value`.
    func increment(_ value: String, by amount: Int64 = 1) {
        (counters[value] ?? other).increment(by: amount)
    }
}
