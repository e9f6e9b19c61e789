/// Where a broadcast stands in its room's ordered stream of broadcasts: two numbers compared in
/// order (a log's entry id, a sequence number and a counter within it, or one number and zero).
///
/// A room whose broadcasts carry positions can be joined with a snapshot
/// (``SocketIOSocket/join(_:snapshot:)``): the broadcasts that arrive while the snapshot is read
/// are held, and those the snapshot already holds (no newer than its position) are not sent
/// twice.
public struct BroadcastPosition: Comparable, Hashable, Sendable {
    /// Compared first.
    public let major: UInt64
    /// Compared when the majors are equal.
    public let minor: UInt64

    /// - Parameters:
    ///   - major: compared first.
    ///   - minor: compared when the majors are equal.
    public init(major: UInt64, minor: UInt64 = 0) {
        self.major = major
        self.minor = minor
    }

    /// Whether `lhs` comes before `rhs`.
    public static func < (lhs: Self, rhs: Self) -> Bool {
        (lhs.major, lhs.minor) < (rhs.major, rhs.minor)
    }
}
