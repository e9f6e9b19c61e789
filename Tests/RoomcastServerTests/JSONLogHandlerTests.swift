import Foundation
import Logging
import RoomcastCore
import Synchronization
import Testing

@testable import RoomcastServer

@Suite("JSON log lines")
struct JSONLogHandlerTests {
    /// Collects the lines a handler writes.
    final class Lines: Sendable {
        private let lines = Mutex<[String]>([])
        var all: [String] { lines.withLock { $0 } }
        var output: JSONLogHandler.Output { JSONLogHandler.Output { line in self.lines.withLock { $0.append(line) } } }
    }

    private static func object(_ line: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "not a JSON object: \(line)")
    }

    @Test("a line has timestamp, level, label, message, then the metadata flattened")
    func fields() throws {
        let lines = Lines()
        var logger = Logger(label: "socket") { JSONLogHandler(label: $0, output: lines.output, metadataProvider: nil) }
        logger[metadataKey: "socket"] = "s1"
        logger.info("socket connected", metadata: ["user": "u1", "room": .stringConvertible(42), "limits": ["rooms": "3", "burst": ["size": "9"]], "ids": ["a", "b"]])
        let line = try #require(lines.all.first)
        #expect(lines.all.count == 1)
        #expect(!line.contains("\n"))
        #expect(line.hasPrefix(#"{"timestamp":""#))
        let object = try Self.object(line)
        #expect(object["level"] as? String == "info")
        #expect(object["label"] as? String == "socket")
        #expect(object["message"] as? String == "socket connected")
        #expect(object["socket"] as? String == "s1")
        #expect(object["user"] as? String == "u1")
        #expect(object["room"] as? String == "42")
        #expect(object["limits.rooms"] as? String == "3")
        #expect(object["limits.burst.size"] as? String == "9")
        #expect(object["ids"] as? [String] == ["a", "b"])
        #expect(Set(object.keys) == ["timestamp", "level", "label", "message", "socket", "user", "room", "limits.rooms", "limits.burst.size", "ids"])
    }

    @Test("the timestamp is ISO 8601 UTC with milliseconds")
    func timestamp() throws {
        let handler = JSONLogHandler(label: "t", output: Lines().output, metadataProvider: nil)
        let event = LogEvent(level: .warning, message: "m", metadata: nil, source: "s", file: #fileID, function: #function, line: #line)
        let line = handler.line(for: event, at: Timestamp(milliseconds: 1_795_000_000_007))
        let object = try Self.object(line)
        #expect(object["timestamp"] as? String == "2026-11-18T11:06:40.007Z")
        #expect(object["level"] as? String == "warning")
    }

    @Test("quotes, backslashes, control characters and non-ASCII text survive a round trip")
    func escaping() throws {
        let lines = Lines()
        let logger = Logger(label: "l\"abel") { JSONLogHandler(label: $0, output: lines.output, metadataProvider: nil) }
        let tricky = "a \"quoted\" \\ back\nslash\ttab \u{01} bell \u{7F} é 😀 \u{2028}"
        logger.error("\(tricky)", metadata: [tricky: .string(tricky)])
        let line = try #require(lines.all.first)
        #expect(!line.contains("\n"))
        let object = try Self.object(line)
        #expect(object["message"] as? String == tricky)
        #expect(object[tricky] as? String == tricky)
        #expect(object["label"] as? String == "l\"abel")
    }

    @Test("metadata cannot shadow the fixed fields; the event's metadata wins over the logger's")
    func collisions() throws {
        let lines = Lines()
        var logger = Logger(label: "x") { JSONLogHandler(label: $0, output: lines.output, metadataProvider: nil) }
        logger[metadataKey: "user"] = "from-logger"
        logger.notice("hello", metadata: ["message": "sneaky", "level": "critical", "user": "from-event"])
        let object = try Self.object(try #require(lines.all.first))
        #expect(object["message"] as? String == "hello")
        #expect(object["level"] as? String == "notice")
        #expect(object["metadata.message"] as? String == "sneaky")
        #expect(object["metadata.level"] as? String == "critical")
        #expect(object["user"] as? String == "from-event")
    }

    @Test("the level filter is the logger's")
    func level() {
        let lines = Lines()
        var logger = Logger(label: "x") { JSONLogHandler(label: $0, output: lines.output, metadataProvider: nil) }
        logger.logLevel = .warning
        logger.info("dropped")
        logger.warning("kept")
        #expect(lines.all.count == 1)
    }

    @Test("log.format reads text and json and refuses anything else, naming the key")
    func setting() async throws {
        let json = try await GatewaySettings.load(configFile: "/nonexistent.yaml", requireFile: false, overrides: [:], environment: ["ROOMCAST_LOG_FORMAT": "json"])
        #expect(json.logFormat == .json)
        let text = try await GatewaySettings.load(configFile: "/nonexistent.yaml", requireFile: false, overrides: [:], environment: [:])
        #expect(text.logFormat == .text)
        let flag = try await GatewaySettings.load(
            configFile: "/nonexistent.yaml", requireFile: false, overrides: ["log.format": "JSON"], environment: ["ROOMCAST_LOG_FORMAT": "text"]
        )
        #expect(flag.logFormat == .json)
        await #expect(throws: ConfigurationError.self) {
            _ = try await GatewaySettings.load(configFile: "/nonexistent.yaml", requireFile: false, overrides: [:], environment: ["ROOMCAST_LOG_FORMAT": "xml"])
        }
    }
}
