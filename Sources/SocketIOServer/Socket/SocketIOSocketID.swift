/// A Socket.IO socket's id (the `sid` of its CONNECT answer): 120 random bits, written as 20
/// URL-safe characters. Kept as two numbers, so a socket holds no string for it.
public struct SocketIOSocketID: Hashable, Sendable, CustomStringConvertible {
    let high: UInt64
    let low: UInt64

    /// A new random id.
    static func random() -> Self {
        var generator = SystemRandomNumberGenerator()
        return Self(high: generator.next(), low: generator.next())
    }

    /// The id as the client sees it.
    public var description: String { RandomID.make(from: (high, low)) }
}
