public import NIOCore

/// The session parameters the server announces in the Engine.IO open packet.
public struct EngineIOHandshake: Hashable, Sendable {
    /// Session id; the client echoes it in the `sid` query parameter.
    public var sid: String
    /// Transports the client may upgrade to, e.g. `["websocket"]` when polling.
    public var upgrades: [String]
    /// Milliseconds between server pings.
    public var pingInterval: Int
    /// Milliseconds the server waits for a pong before closing the session.
    public var pingTimeout: Int
    /// Largest polling body, in bytes, the client should send.
    public var maxPayload: Int

    /// Creates a handshake; the defaults are the reference server's.
    public init(
        sid: String,
        upgrades: [String] = [],
        pingInterval: Int = 25_000,
        pingTimeout: Int = 20_000,
        maxPayload: Int = 1_000_000
    ) {
        self.sid = sid
        self.upgrades = upgrades
        self.pingInterval = pingInterval
        self.pingTimeout = pingTimeout
        self.maxPayload = maxPayload
    }

    /// Appends the complete open packet, `0{"sid":…}`, to `buffer`.
    public func encode(into buffer: inout ByteBuffer) {
        buffer.writeInteger(UInt8(ascii: "0"))
        self.writeJSON(into: &buffer)
    }

    /// The open packet, whose data is the handshake JSON object.
    public var packet: EngineIOPacket {
        var json = ByteBufferAllocator().buffer(capacity: 128)
        self.writeJSON(into: &json)
        return .open(json)
    }

    private func writeJSON(into buffer: inout ByteBuffer) {
        buffer.writeStaticString("{\"sid\":")
        JSONEscaper.writeQuoted(self.sid, into: &buffer)
        buffer.writeStaticString(",\"upgrades\":[")
        for (index, upgrade) in self.upgrades.enumerated() {
            if index > 0 { buffer.writeInteger(UInt8(ascii: ",")) }
            JSONEscaper.writeQuoted(upgrade, into: &buffer)
        }
        buffer.writeStaticString("],\"pingInterval\":")
        buffer.writeString(String(self.pingInterval))
        buffer.writeStaticString(",\"pingTimeout\":")
        buffer.writeString(String(self.pingTimeout))
        buffer.writeStaticString(",\"maxPayload\":")
        buffer.writeString(String(self.maxPayload))
        buffer.writeInteger(UInt8(ascii: "}"))
    }
}
