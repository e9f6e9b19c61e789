import NIOCore

/// The connections of a ``RedisSubscriber``: one to the server, or in cluster mode one per
/// master (shard), with the slot map that says which shard carries a channel.
///
/// Channels are sharded (`SSUBSCRIBE`, `SUNSUBSCRIBE`) in both modes: messages published with
/// `SPUBLISH` reach only sharded subscribers, and the scripts publish that way.
struct SubscriberLinks: Sendable {
    /// Counts the link sets a subscriber made, so a caller can tell a new set from the old one.
    let generation: Int
    /// `nil` in standalone mode.
    let topology: ClusterTopology?
    /// The only connection in standalone mode; one per master in cluster mode.
    let connections: [RedisEndpoint: RedisConnection]

    /// Every connection.
    var all: [RedisConnection] { Array(connections.values) }

    /// The connection whose shard carries `channel`.
    func connection(for channel: String) -> RedisConnection? {
        guard let topology else { return connections.values.first }
        return topology.master(for: HashSlot(key: channel)).flatMap { connections[$0] }
    }

    /// Writes `verb channel` once per channel on each channel's shard (one write per shard) and
    /// completes when Redis confirmed them all.
    /// - Parameters:
    ///   - verb: `SSUBSCRIBE` or `SUNSUBSCRIBE`.
    ///   - kind: the confirmation's first word, `ssubscribe` or `sunsubscribe`.
    func write(_ verb: String, confirmedAs kind: String, _ channels: [String], deadline: NIODeadline, on eventLoop: any EventLoop) -> EventLoopFuture<Void> {
        var byConnection: [ObjectIdentifier: (connection: RedisConnection, channels: [String])] = [:]
        for channel in channels {
            guard let connection = connection(for: channel) else {
                return eventLoop.makeFailedFuture(RedisError(.connectionFailed, "no shard is known for channel \(channel)"))
            }
            byConnection[ObjectIdentifier(connection), default: (connection, [])].channels.append(channel)
        }
        let futures = byConnection.values.map { entry in
            var bytes = ByteBufferAllocator().buffer(capacity: 64 * entry.channels.count)
            for channel in entry.channels {
                bytes.writeImmutableBuffer(RedisCommand(verb, channel).encoded)
            }
            return entry.connection.submit(name: verb, bytes: bytes, replyCount: entry.channels.count, deadline: deadline)
                .confirming(kind)
        }
        return EventLoopFuture.andAllSucceed(futures, on: eventLoop)
    }

    /// Starts closing every connection.
    func closeAll() {
        for connection in connections.values { connection.closeSoon() }
    }
}

extension EventLoopFuture where Value == [RedisReply] {
    /// Succeeds when every reply is a confirmation of `kind` (`ssubscribe`, `sunsubscribe`); an
    /// error reply (`MOVED` ...) fails it as ``RedisError/Code/reply``.
    func confirming(_ kind: String) -> EventLoopFuture<Void> {
        flatMapThrowing { replies in
            for reply in replies {
                guard case .array(let elements) = reply, elements.first?.string == kind else {
                    throw RedisError.unexpected(reply, expected: "a \(kind) confirmation")
                }
            }
        }
    }
}
