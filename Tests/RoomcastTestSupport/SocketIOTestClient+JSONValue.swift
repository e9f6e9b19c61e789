// Payloads written as `JSONValue` literals instead of JSON text:
// `try await client.emitWithAck("room:join", ["roomId": .string(roomId)])["data"]["roomId"]`.
extension SocketIOTestClient {
    /// `emit(_:_:)` with the payload encoded from a `JSONValue`.
    public func emit(_ event: String, _ payload: JSONValue) async throws {
        try await self.emit(event, payload.description)
    }

    /// `emitWithAck(_:_:timeout:)` with the payload encoded from a `JSONValue`; returns the ack decoded.
    public func emitWithAck(_ event: String, _ payload: JSONValue, timeout: Duration = .seconds(30)) async throws -> JSONValue {
        try JSONValue(await self.emitWithAck(event, payload.description, timeout: timeout))
    }
}
