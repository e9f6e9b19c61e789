import Foundation

/// A point in time with millisecond precision, stored in Redis as epoch milliseconds and shown
/// to clients as ISO 8601 UTC with milliseconds (`2026-11-22T08:00:00.123Z`).
public struct Timestamp: Hashable, Sendable, Comparable, Codable, CustomStringConvertible {
    /// Milliseconds since 1970-01-01T00:00:00Z.
    public let milliseconds: Int64

    /// Creates a timestamp from epoch milliseconds.
    public init(milliseconds: Int64) {
        self.milliseconds = milliseconds
    }

    /// The current time.
    public static func now() -> Timestamp {
        Timestamp(milliseconds: Int64((Date().timeIntervalSince1970 * 1000).rounded()))
    }

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.milliseconds < rhs.milliseconds }

    /// ISO 8601 with milliseconds, UTC.
    public var description: String {
        // The formatter gets whole seconds and the milliseconds are written from the integer:
        // `Double(milliseconds) / 1000` is inexact and the formatter truncates (.123 showed as .122).
        var seconds = milliseconds / 1000
        var millisecond = milliseconds % 1000
        if millisecond < 0 {
            seconds -= 1
            millisecond += 1000
        }
        let whole = Date(timeIntervalSince1970: Double(seconds)).formatted(Self.wholeSecondsStyle)
        let digits = String(millisecond)
        return whole.dropLast() + "." + String(repeating: "0", count: 3 - digits.count) + digits + "Z"
    }

    private static let style = Date.ISO8601FormatStyle(includingFractionalSeconds: true, timeZone: .gmt)
    private static let wholeSecondsStyle = Date.ISO8601FormatStyle(timeZone: .gmt)

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let date = try? Self.style.parse(text) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "expected an ISO 8601 timestamp")
        }
        milliseconds = Int64((date.timeIntervalSince1970 * 1000).rounded())
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}
