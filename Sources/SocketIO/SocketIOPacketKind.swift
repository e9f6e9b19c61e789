/// The Socket.IO v5 packet types; BINARY_EVENT (5) and BINARY_ACK (6) decode as `.event` and `.ack`
/// with ``SocketIOPacket/attachments`` set.
public enum SocketIOPacketKind: UInt8, Hashable, Sendable, CaseIterable {
    /// `0`: join a namespace (client, optional auth object) or confirm it (server, `{"sid":…}`).
    case connect = 0
    /// `1`: leave a namespace.
    case disconnect = 1
    /// `2`: an event, `["name", args…]`.
    case event = 2
    /// `3`: the reply to an event that carried an ack id.
    case ack = 3
    /// `4`: the server refused a namespace connection.
    case connectError = 4

    /// The type digit as written on the wire.
    public var digit: UInt8 { UInt8(ascii: "0") &+ self.rawValue }
}
