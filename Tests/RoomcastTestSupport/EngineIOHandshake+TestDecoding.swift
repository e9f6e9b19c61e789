public import SocketIO

extension EngineIOHandshake {
    /// Reads the JSON object of an open packet (`0{…}`) the way a strict client would.
    ///
    /// Every field of the Engine.IO v4 handshake is required, with its JSON type: a server that
    /// leaves one out would break real clients, so the test client refuses it.
    /// - Parameter json: the open packet's data, without the leading `0`.
    public init(openPacketJSON json: String) throws(SocketIOTestError) {
        let value = try JSONValue(json)
        func integer(_ key: String) throws(SocketIOTestError) -> Int {
            guard let number = value[key].intValue, number > 0 else {
                throw SocketIOTestError.protocolViolation("open packet needs a positive integer \"\(key)\": \(json)")
            }
            return number
        }
        guard let sid = value["sid"].stringValue, !sid.isEmpty else {
            throw SocketIOTestError.protocolViolation("open packet needs a non-empty \"sid\" string: \(json)")
        }
        guard let upgrades = value["upgrades"].arrayValue?.map(\.stringValue), !upgrades.contains(nil) else {
            throw SocketIOTestError.protocolViolation("open packet needs an \"upgrades\" array of strings: \(json)")
        }
        self.init(
            sid: sid,
            upgrades: upgrades.compactMap { $0 },
            pingInterval: try integer("pingInterval"),
            pingTimeout: try integer("pingTimeout"),
            maxPayload: try integer("maxPayload")
        )
    }
}
