extension Duration {
    /// The duration in whole milliseconds, for Redis arguments and the wire.
    public var wholeMilliseconds: Int {
        let (seconds, attoseconds) = components
        return Int(seconds) * 1000 + Int(attoseconds / 1_000_000_000_000_000)
    }
}
