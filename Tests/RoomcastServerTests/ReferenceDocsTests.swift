import Foundation
import HTTPTypes
import RoomcastCore
@testable import RoomcastServer
import RoomcastTestSupport
import Testing

/// The reference tables of `docs/` against the code they describe: a client event, a server
/// event, an error code or a metric that exists in the code must have its row, and a row must
/// name something that exists. Each list is read where the code defines it (the event router,
/// `ServerEvent`, the error catalogue's source, a running node's `/metrics`), never copied here.
@Suite("The reference documentation matches the code", .serialized)
struct ReferenceDocsTests {
    @Test("docs/clients/events.md lists every client event the router handles, and no other")
    func clientEvents() throws {
        let rows = try Self.rows(of: "docs/clients/events.md", section: "## Client → server events")
        let documented = try Self.names(rows)
        let handled = Set(SocketEventRouter.eventNames)
        #expect(handled.count >= 10, "\(handled.sorted())")
        #expect(handled.subtracting(documented).isEmpty, "handled but not in events.md: \(handled.subtracting(documented).sorted())")
        #expect(documented.subtracting(handled).isEmpty, "in events.md but not handled: \(documented.subtracting(handled).sorted())")
    }

    @Test("docs/clients/events.md lists every server event, with the right offset and recovery columns")
    func serverEvents() throws {
        let rows = try Self.rows(of: "docs/clients/events.md", section: "## Server → client events")
        let documented = try Self.names(rows)
        let sent = Set(ServerEvent.allCases.map(\.rawValue))
        #expect(sent.subtracting(documented).isEmpty, "sent but not in events.md: \(sent.subtracting(documented).sorted())")
        #expect(documented.subtracting(sent).isEmpty, "in events.md but not a ServerEvent: \(documented.subtracting(sent).sorted())")
        for row in rows {
            guard let event = ServerEvent(rawValue: Self.codeSpan(row[0]) ?? ""), row.count >= 5 else { continue }
            // Room events carry the room stream's offset and are replayed from it; the join's
            // snapshot carries the offset it is current at but is not an event of the stream.
            let isRoomEvent = ServerEvent.roomEvents.contains(event)
            #expect(try Self.yes(row[3]) == (isRoomEvent || event == .elementsBatch), "\(event.rawValue): offset column '\(row[3])'")
            #expect(try Self.yes(row[4]) == isRoomEvent, "\(event.rawValue): replayed column '\(row[4])'")
        }
    }

    @Test("docs/clients/errors.md lists every error code with the HTTP status the server answers")
    func errorCodes() throws {
        let source = try Self.read("Sources/RoomcastCore/Model/RoomcastError.swift")
        let defined = Set(Self.matches(of: #"Code\(rawValue: "([a-z_]+)"\)"#, in: source))
        #expect(defined.count >= 10, "error codes found in RoomcastError.swift: \(defined.sorted())")
        let rows = try Self.rows(of: "docs/clients/errors.md", section: "## Error codes")
        let documented = try Self.names(rows)
        #expect(defined.subtracting(documented).isEmpty, "defined but not in errors.md: \(defined.subtracting(documented).sorted())")
        #expect(documented.subtracting(defined).isEmpty, "in errors.md but not defined: \(documented.subtracting(defined).sorted())")
        for row in rows {
            guard let code = Self.codeSpan(row[0]), row.count >= 2 else { continue }
            let status = row[1].trimmingCharacters(in: .whitespaces)
            // "—" for a code no REST route answers with; otherwise the status must be the server's.
            guard let documentedStatus = Int(status) else {
                #expect(status == "—", "\(code): HTTP status '\(status)'")
                continue
            }
            let answered = RoomcastError(RoomcastError.Code(rawValue: code), "").status.code
            #expect(documentedStatus == answered, "\(code): errors.md says \(documentedStatus), the server answers \(answered)")
        }
    }

    @Test("docs/operations/observability.md lists every metric a running node exports, and no other")
    func metrics() async throws {
        let rows = try Self.rows(of: "docs/operations/observability.md", section: "## Metrics")
        let documented = try Self.names(rows)
        let exported = Set(try await Self.exportedMetrics().keys)
        #expect(exported.count >= 10, "\(exported.sorted())")
        #expect(exported.subtracting(documented).isEmpty, "exported but not in observability.md: \(exported.subtracting(documented).sorted())")
        #expect(documented.subtracting(exported).isEmpty, "in observability.md but not exported: \(documented.subtracting(exported).sorted())")
    }

    @Test("the alert rules and the dashboard of docs/operations/monitoring name only metrics a running node exports")
    func monitoringMetrics() async throws {
        let families = try await Self.exportedMetrics()
        for path in ["docs/operations/monitoring/alerts.yml", "docs/operations/monitoring/dashboard.json"] {
            // Prometheus's own series (`up`) are not the node's: only `roomcast_` names are read.
            let named = Set(Self.matches(of: #"\b(roomcast_[a-z_]+)"#, in: try Self.read(path)))
            #expect(named.count >= 5, "\(path): \(named.sorted())")
            for name in named {
                #expect(Self.family(of: name, in: families) != nil, "\(path) names \(name), which a node does not export")
            }
        }
    }

    /// The family a series name belongs to: itself, or the histogram whose `_bucket`, `_count` or
    /// `_sum` it is.
    static func family(of name: String, in families: [String: String]) -> String? {
        if families[name] != nil { return name }
        for suffix in ["_bucket", "_count", "_sum"] where name.hasSuffix(suffix) {
            let base = String(name.dropLast(suffix.count))
            if families[base] == "histogram" { return base }
        }
        return nil
    }

    /// The metric families (name → type) a fresh node exports once it has answered a request that
    /// reaches Redis.
    static func exportedMetrics() async throws -> [String: String] {
        try await TestRedis.with { redis in
            let node = try await GatewayProcess(arguments: ["--redis-url", redis.url, "--log-level", "warning"])
            do {
                // A request that reaches Redis, so that the Redis command metrics exist too.
                #expect(try await HTTPTestClient.request(port: node.port, path: "/readyz").status == 200)
                let response = try await HTTPTestClient.request(port: node.port, path: "/metrics")
                let exposition = try PrometheusExposition(parsing: response.text)
                await node.stop()
                return exposition.families.mapValues(\.type)
            } catch {
                await node.stop()
                throw error
            }
        }
    }

    // MARK: Reading the documents

    /// The repository's root: this file is `Tests/RoomcastServerTests/ReferenceDocsTests.swift`.
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func read(_ path: String) throws -> String {
        try String(contentsOf: repository.appendingPathComponent(path), encoding: .utf8)
    }

    /// The cells of the rows of the first table in the section under `heading` (up to the next
    /// heading of its level or above), header and separator rows left out. `\|` inside a cell
    /// is a `|`.
    static func rows(of path: String, section heading: String) throws -> [[String]] {
        let lines = try read(path).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let level = heading.prefix { $0 == "#" }.count
        guard let start = lines.firstIndex(of: heading) else {
            throw DocumentError("\(path) has no heading '\(heading)'")
        }
        var rows: [[String]] = []
        var isHeaderRow = true
        for line in lines[(start + 1)...] {
            let hashes = line.prefix { $0 == "#" }.count
            if hashes > 0, hashes <= level, line.dropFirst(hashes).first == " " { break }
            guard line.hasPrefix("|") else {
                // The first table ends at its first line that is not a row.
                if !rows.isEmpty { break }
                isHeaderRow = true
                continue
            }
            let cells = line.replacingOccurrences(of: #"\|"#, with: "\u{0}")
                .split(separator: "|", omittingEmptySubsequences: false).dropFirst().dropLast()
                .map { $0.replacingOccurrences(of: "\u{0}", with: "|").trimmingCharacters(in: .whitespaces) }
            defer { isHeaderRow = false }
            if isHeaderRow || cells.allSatisfy({ $0.allSatisfy { "-: ".contains($0) } }) { continue }
            rows.append(cells)
        }
        guard !rows.isEmpty else { throw DocumentError("\(path): no table under '\(heading)'") }
        return rows
    }

    /// The names of the rows: each row's first cell is one code span.
    static func names(_ rows: [[String]]) throws -> Set<String> {
        var names: Set<String> = []
        for row in rows {
            guard let name = codeSpan(row[0]) else { throw DocumentError("a row's first cell is not one `name`: \(row)") }
            #expect(names.insert(name).inserted, "\(name) has two rows")
        }
        return names
    }

    /// `name` for a cell that is exactly `` `name` ``.
    static func codeSpan(_ cell: String) -> String? {
        guard cell.count > 2, cell.hasPrefix("`"), cell.hasSuffix("`") else { return nil }
        let inner = cell.dropFirst().dropLast()
        return inner.contains("`") ? nil : String(inner)
    }

    /// A `yes` / `no` cell.
    static func yes(_ cell: String) throws -> Bool {
        switch cell.lowercased() {
        case "yes": return true
        case "no": return false
        default: throw DocumentError("expected yes or no, found '\(cell)'")
        }
    }

    /// The first capture group of every match of `pattern`.
    static func matches(of pattern: String, in text: String) -> [String] {
        guard let expression = try? NSRegularExpression(pattern: pattern) else { return [] }
        let range = NSRange(text.startIndex..., in: text)
        return expression.matches(in: text, range: range).compactMap { match in
            Range(match.range(at: 1), in: text).map { String(text[$0]) }
        }
    }

    struct DocumentError: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }
}
