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

    /// Reads a job from a stream entry's `[field, value, …]`; `nil` for an entry that is not one.
    init?(id: String, fields: [RedisReplyField], deliveries: Int) {
        var values: [String: ByteBuffer] = [:]
        for field in fields { values[field.name] = field.value }
        guard let user = values["user"].map({ String(buffer: $0) }).flatMap(UserID.init), let token = values["token"],
            let payload = values["payload"]
        else { return nil }
        self.id = id
        self.user = user
        self.token = String(buffer: token)
        self.notification = values["notification"].map { String(buffer: $0) } ?? ""
        self.payload = payload
        self.deliveries = deliveries
    }
}

/// A field of a stream entry.
struct RedisReplyField {
    var name: String
    var value: ByteBuffer
}
