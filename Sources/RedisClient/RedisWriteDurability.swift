/// How sure the reply to a write is that the write survives the loss of the master that applied
/// it.
///
/// A Redis master answers a write once it has applied it, and sends it to its replicas right
/// after. A master that dies in between takes the write with it when a replica is promoted in
/// its place, though the write was answered as done.
public enum RedisWriteDurability: Sendable, Hashable {
    /// The master's reply is enough: fastest; a write answered just before the master is lost
    /// may be missing on the replica that takes over.
    case master
    /// `WAIT <replicas> <timeout>` follows the write on the same connection, in the same network
    /// write: the reply comes once that many replicas have confirmed the write (and everything
    /// sent on that connection before it). When fewer did within `timeout`, the call fails with
    /// ``RedisError/Code/notReplicated``: the master did apply the write, but it may be lost with
    /// that master, so it is not reported as done.
    ///
    /// `WAIT` holds its connection meanwhile: other commands pipelined behind it on that
    /// connection wait too, up to `timeout` when a replica lags.
    case replicas(Int, timeout: Duration)

    /// `WAIT`'s arguments: the replica count and the timeout in whole milliseconds, at least 1
    /// (`WAIT n 0` would wait for ever).
    var waitArguments: (replicas: Int, milliseconds: Int64)? {
        guard case .replicas(let count, let timeout) = self else { return nil }
        let (seconds, attoseconds) = timeout.components
        return (count, max(1, seconds * 1000 + attoseconds / 1_000_000_000_000_000))
    }
}
