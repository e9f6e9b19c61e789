/// What a Socket.IO server holds each connection to, beside its Engine.IO settings.
public struct SocketIOSettings: Sendable {
    /// Bytes of packets waiting for the connection's handler: a client that sends without
    /// waiting for its acks is closed (1008) past it.
    public var inboundQueueBytes: Int
    /// The most binary attachments one packet may announce; more closes the connection.
    public var maxAttachments: Int

    public init(inboundQueueBytes: Int = 2 * 1024 * 1024, maxAttachments: Int = 64) {
        self.inboundQueueBytes = inboundQueueBytes
        self.maxAttachments = maxAttachments
    }
}
