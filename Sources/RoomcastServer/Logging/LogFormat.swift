public import Logging

/// How a node writes its log lines (`log.format`, `--log-format`).
public enum LogFormat: String, Sendable, CaseIterable {
    /// swift-log's own lines, for people: `2026-11-23T10:00:00+0000 info socket: sid=… socket connected`.
    case text
    /// One JSON object per line, for log collectors (see ``JSONLogHandler``).
    case json

    /// A handler writing to standard error in this format.
    /// - Parameters:
    ///   - label: the logger's label.
    ///   - level: the lowest level written.
    public func handler(label: String, level: Logger.Level) -> any LogHandler {
        switch self {
        case .text:
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        case .json:
            var handler = JSONLogHandler(label: label, output: .standardError)
            handler.logLevel = level
            return handler
        }
    }
}
