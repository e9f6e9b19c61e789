import NIOCore

/// The bytes a connection holds for a client that is not reading them, against a limit.
///
/// Each frame counts its bytes plus ``perFrameBytes``, what holding one more buffer costs the
/// node whatever its size (the buffer's header and a queue slot): a flood of one-byte pongs is
/// bounded as surely as a few large events.
struct OutboundBudget {
    /// The fixed cost counted for every frame held.
    static let perFrameBytes = 64

    let limit: Int
    private(set) var used = 0

    init(limit: Int) {
        self.limit = limit
    }

    /// Counts `frame`; false when it would take the total past the limit (it is not counted).
    mutating func take(_ frame: ByteBuffer) -> Bool {
        let cost = frame.readableBytes + Self.perFrameBytes
        guard used + cost <= limit else { return false }
        used += cost
        return true
    }

    /// Returns `frame`'s bytes (it was sent).
    mutating func give(back frame: ByteBuffer) {
        used = max(0, used - frame.readableBytes - Self.perFrameBytes)
    }

    /// Nothing is held any more.
    mutating func reset() {
        used = 0
    }
}
