public import Logging
import RoomcastCore
import SystemPackage

/// Writes each log event as one line of JSON:
/// `{"timestamp":"2026-11-23T10:00:00.123Z","level":"info","label":"socket","message":"socket connected","socket":"…","user":"…"}`.
///
/// `timestamp` is ISO 8601 UTC with milliseconds. Metadata (the handler's, its provider's, then
/// the event's, later ones winning) is flattened into the same object: a nested dictionary's keys
/// are joined with dots (`{"a":{"b":"c"}}` becomes `"a.b":"c"`), a list becomes an array of
/// strings, and a key that would shadow one of the four fields above is written `metadata.<key>`.
public struct JSONLogHandler: LogHandler {
    /// Where lines go.
    public struct Output: Sendable {
        let write: @Sendable (String) -> Void

        /// Lines to `write`, each without its newline (for tests).
        public init(_ write: @escaping @Sendable (String) -> Void) {
            self.write = write
        }

        /// Standard error, unbuffered: one `write(2)` per line, so lines from several threads do
        /// not interleave (a write up to `PIPE_BUF` bytes to a pipe is atomic).
        public static let standardError = Output { line in
            // Nowhere to report a failed write of a log line.
            _ = try? FileDescriptor.standardError.writeAll((line + "\n").utf8)
        }
    }

    /// The fields every line has, in this order.
    static let fixedKeys: Set<String> = ["timestamp", "level", "label", "message"]

    /// The logger's label.
    public let label: String
    public var logLevel: Logger.Level = .info
    public var metadata: Logger.Metadata = [:]
    public var metadataProvider: Logger.MetadataProvider?
    private let output: Output

    /// Creates a handler.
    /// - Parameters:
    ///   - label: written as `label` on every line.
    ///   - output: where lines go.
    ///   - metadataProvider: metadata added to every line (task-local context …).
    public init(label: String, output: Output = .standardError, metadataProvider: Logger.MetadataProvider? = LoggingSystem.metadataProvider) {
        self.label = label
        self.output = output
        self.metadataProvider = metadataProvider
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        output.write(line(for: event, at: Timestamp.now()))
    }

    /// The JSON line of `event` logged at `time` (without its newline).
    func line(for event: LogEvent, at time: Timestamp) -> String {
        var merged = metadata
        if let provided = metadataProvider?.get() {
            merged.merge(provided) { $1 }
        }
        if let own = event.metadata {
            merged.merge(own) { $1 }
        }
        if let error = event.error, merged["error"] == nil {
            merged["error"] = .string("\(error)")
        }
        var flat: [(key: String, value: FlatValue)] = []
        for (key, value) in merged {
            Self.flatten(value, key: Self.fixedKeys.contains(key) ? "metadata." + key : key, into: &flat)
        }
        flat.sort { $0.key < $1.key }

        var json = "{"
        Self.append(key: "timestamp", string: time.description, to: &json)
        json += ","
        Self.append(key: "level", string: event.level.rawValue, to: &json)
        json += ","
        Self.append(key: "label", string: label, to: &json)
        json += ","
        Self.append(key: "message", string: event.message.description, to: &json)
        for (key, value) in flat {
            json += ","
            switch value {
            case .string(let string):
                Self.append(key: key, string: string, to: &json)
            case .array(let strings):
                Self.appendString(key, to: &json)
                json += ":["
                for (index, string) in strings.enumerated() {
                    if index > 0 { json += "," }
                    Self.appendString(string, to: &json)
                }
                json += "]"
            }
        }
        json += "}"
        return json
    }

    /// A metadata value once flattened.
    enum FlatValue: Equatable {
        case string(String)
        case array([String])
    }

    private static func flatten(_ value: Logger.MetadataValue, key: String, into flat: inout [(key: String, value: FlatValue)]) {
        switch value {
        case .string(let string):
            flat.append((key, .string(string)))
        case .stringConvertible(let convertible):
            flat.append((key, .string(convertible.description)))
        case .dictionary(let dictionary):
            for (inner, value) in dictionary {
                flatten(value, key: key + "." + inner, into: &flat)
            }
        case .array(let values):
            flat.append((key, .array(values.map(\.description))))
        }
    }

    private static func append(key: String, string: String, to json: inout String) {
        appendString(key, to: &json)
        json += ":"
        appendString(string, to: &json)
    }

    /// Appends `string` as a JSON string: quotes, backslashes and control characters escaped.
    static func appendString(_ string: String, to json: inout String) {
        json += "\""
        for scalar in string.unicodeScalars {
            switch scalar {
            case "\"": json += "\\\""
            case "\\": json += "\\\\"
            case "\n": json += "\\n"
            case "\r": json += "\\r"
            case "\t": json += "\\t"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F || scalar.value == 0x2028 || scalar.value == 0x2029:
                let hex = String(scalar.value, radix: 16)
                json += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default:
                json.unicodeScalars.append(scalar)
            }
        }
        json += "\""
    }
}
