import Foundation

/// One scenario's figures: printed as one JSON line (fields in the order added) and a summary.
struct BenchReport {
    private var fields: [(key: String, json: String)] = []
    private(set) var summary: [String] = []

    init(scenario: String) {
        add("scenario", scenario)
    }

    mutating func add(_ key: String, _ value: String) {
        fields.append((key, "\"\(value)\""))
    }

    mutating func add(_ key: String, _ value: Int) {
        fields.append((key, "\(value)"))
    }

    /// A number with `digits` decimals; nil (not measured) is JSON null.
    mutating func add(_ key: String, _ value: Double?, digits: Int = 2) {
        fields.append((key, value.map { String(format: "%.\(digits)f", $0) } ?? "null"))
    }

    /// Latency percentiles in milliseconds, as one object.
    mutating func addLatency(_ summary: LatencyRecorder.Summary) {
        let ms = { (seconds: Double) in String(format: "%.2f", seconds * 1000) }
        fields.append(("latency_ms", #"{"p50":\#(ms(summary.p50)),"p90":\#(ms(summary.p90)),"p99":\#(ms(summary.p99)),"max":\#(ms(summary.max))}"#))
        line("latency p50 \(ms(summary.p50)) ms, p90 \(ms(summary.p90)) ms, p99 \(ms(summary.p99)) ms, max \(ms(summary.max)) ms")
    }

    /// Redis CPU per event sent (`redis_cpu_us_per_<unit>`) and gateway CPU per delivery, in µs,
    /// from a paced run; gateway CPU is null without `--pids`.
    mutating func addCPU(_ outcome: PacedSenders.Outcome, sent: Int, per unit: String, delivered: Int, digits: Int) {
        let redis = sent > 0 ? outcome.redisCPU / Double(sent) * 1e6 : nil
        let gateway = delivered == 0 ? nil : outcome.gatewayCPU.map { $0 / Double(delivered) * 1e6 }
        add("redis_cpu_us_per_\(unit)", redis, digits: 1)
        add("gateway_cpu_us_per_delivery", gateway, digits: digits)
        line("Redis CPU \(redis?.formatted(1) ?? "-") µs per \(unit), gateways \(gateway?.formatted(digits) ?? "-") µs CPU per delivery")
    }

    /// The report of a room fan-out: one sender per room, each event to `recipients` sockets.
    static func fanout(
        _ scenario: String, title: String, unit: String, options: Options, rooms: Int, recipients: Int,
        result: LatencyRecorder.Summary, delivered: Int, outcome: PacedSenders.Outcome
    ) -> BenchReport {
        let expected = result.sent * recipients
        var report = BenchReport(scenario: scenario)
        report.add("rooms", rooms)
        report.add("members", options.members)
        report.add("rate_per_room", options.rate, digits: 1)
        report.add("seconds", outcome.seconds)
        report.add("sent", result.sent)
        report.add("delivered", delivered)
        report.add("lost", expected - delivered)
        report.add("delivered_per_second", Double(delivered) / outcome.seconds, digits: 0)
        report.line("\(title): \(rooms) rooms × \(options.members) members, \(options.rate)/s per room for \(outcome.seconds.formatted(1)) s over \(options.gateways.count) node(s)")
        report.line("delivered \(delivered) of \(expected) \(unit)s (\((Double(delivered) / outcome.seconds).formatted(0))/s), lost \(expected - delivered)")
        report.addLatency(result)
        report.addCPU(outcome, sent: result.sent, per: unit, delivered: delivered, digits: 2)
        return report
    }

    /// A line of the human summary.
    mutating func line(_ text: String) {
        summary.append(text)
    }

    func print() {
        Swift.print("{" + fields.map { "\"\($0.key)\":\($0.json)" }.joined(separator: ",") + "}")
        for (index, text) in summary.enumerated() {
            Swift.print(index == 0 ? text : "  " + text)
        }
    }
}

extension Double {
    /// The number with `digits` decimals, for summaries.
    func formatted(_ digits: Int) -> String { String(format: "%.\(digits)f", self) }
}
