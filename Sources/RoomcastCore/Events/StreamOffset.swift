/// A Redis stream entry id (`<milliseconds>-<sequence>`), the `offset` of a room event, ordered
/// as Redis orders it.
public struct StreamOffset: Hashable, Sendable, Comparable, CustomStringConvertible {
    public let milliseconds: UInt64
    public let sequence: UInt64

    /// Parses `<ms>-<seq>`; `nil` for anything else.
    public init?(_ text: some StringProtocol) {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 2, let milliseconds = UInt64(parts[0]), let sequence = UInt64(parts[1]) else { return nil }
        self.milliseconds = milliseconds
        self.sequence = sequence
    }

    public static func < (lhs: Self, rhs: Self) -> Bool {
        (lhs.milliseconds, lhs.sequence) < (rhs.milliseconds, rhs.sequence)
    }

    public var description: String { "\(milliseconds)-\(sequence)" }
}
