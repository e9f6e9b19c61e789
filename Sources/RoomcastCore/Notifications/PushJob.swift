public import NIOCore

/// One push to one device, as the outbox holds it.
public struct PushJob: Sendable {
    /// The outbox stream entry id.
    public var id: String
    /// Whose device it is.
    public var user: UserID
    /// The device token.
    public var token: String
    /// The notification it announces.
    public var notification: String
    /// The APNs JSON payload, ready to send.
    public var payload: ByteBuffer
    /// How many times a worker has been handed it, this time included.
    public var deliveries: Int

    /// Reads a job from an outbox entry; `nil` for an entry that is not one.
    init?(_ entry: RedisStreamEntry, deliveries: Int) {
        let values = entry.fields
        guard let user = values["user"].map({ String(buffer: $0) }).flatMap(UserID.init), let token = values["token"],
            let payload = values["payload"]
        else { return nil }
        self.id = String(buffer: entry.id)
        self.user = user
        self.token = String(buffer: token)
        self.notification = values["notification"].map { String(buffer: $0) } ?? ""
        self.payload = payload
        self.deliveries = deliveries
    }
}
