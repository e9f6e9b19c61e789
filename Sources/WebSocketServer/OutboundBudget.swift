public import NIOCore

/// The bytes a connection holds for a client that is not reading them, against a limit.
///
/// Each frame counts its bytes plus ``perFrameBytes``, what holding one more buffer costs the
/// node whatever its size (the buffer's header and a queue slot): a flood of one-byte pongs is
/// bounded as surely as a few large events.
public struct OutboundBudget: Sendable {
    /// The fixed cost counted for every frame held.
    public static let perFrameBytes = 64

    public let limit: Int
    public private(set) var used = 0

    public init(limit: Int) {
        self.limit = limit
    }

    /// Counts `frame`; false when it would take the total past the limit (it is not counted).
    public mutating func take(_ frame: ByteBuffer) -> Bool {
        let cost = frame.readableBytes + Self.perFrameBytes
        guard used + cost <= limit else { return false }
        used += cost
        return true
    }

    /// Counts `byteCount` bytes as one frame; false when they would take the total past the
    /// limit (they are not counted).
    public mutating func take(byteCount: Int) -> Bool {
        let cost = byteCount + Self.perFrameBytes
        guard used + cost <= limit else { return false }
        used += cost
        return true
    }

    /// Returns what ``take(byteCount:)`` counted.
    public mutating func give(backByteCount byteCount: Int) {
        used = max(0, used - byteCount - Self.perFrameBytes)
    }

    /// Returns `frame`'s bytes (it was sent).
    public mutating func give(back frame: ByteBuffer) {
        used = max(0, used - frame.readableBytes - Self.perFrameBytes)
    }

    /// Nothing is held any more.
    public mutating func reset() {
        used = 0
    }
}
