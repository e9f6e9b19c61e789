public import NIOCore

/// One push to one device.
public struct APNsRequest: Sendable {
    /// The device token in hex; it becomes the path `/3/device/<token>`.
    public var deviceToken: String
    /// The JSON body, already encoded by the caller and sent as is.
    public var payload: ByteBuffer
    /// `apns-push-type`: `alert`, `background`, `voip` …
    public var pushType: String
    /// `apns-priority`: 10 to deliver at once, 5 to let the device save power, 1 lowest.
    public var priority: Int
    /// `apns-expiration` in epoch seconds; omitted when nil (APNs then tries once).
    public var expiration: Int?
    /// `apns-collapse-id`; omitted when nil.
    public var collapseID: String?
    /// `apns-id`, a UUID naming the push; omitted when nil (APNs then makes one).
    public var apnsID: String?

    /// Creates a request.
    public init(
        deviceToken: String,
        payload: ByteBuffer,
        pushType: String = "alert",
        priority: Int = 10,
        expiration: Int? = nil,
        collapseID: String? = nil,
        apnsID: String? = nil
    ) {
        self.deviceToken = deviceToken
        self.payload = payload
        self.pushType = pushType
        self.priority = priority
        self.expiration = expiration
        self.collapseID = collapseID
        self.apnsID = apnsID
    }
}
