public import NIOCore

// Raw frames, heartbeats and the end of the connection: the protocol-level half of the client.
extension SocketIOTestClient {
    /// Sends one WebSocket text frame exactly as given (malformed or oversized packets).
    ///
    /// Frames are never fragmented. The server may hang up while a large frame is still being
    /// written, in which case this throws `.closed`; `waitForClose` then tells how it ended.
    public func sendRaw(text: String) async throws {
        try await self.session.send(text: ByteBuffer(string: text))
    }

    /// Sends one WebSocket text frame with these bytes, valid UTF-8 or not.
    public func sendRaw(textBytes: ByteBuffer) async throws {
        try await self.session.send(text: textBytes)
    }

    /// Sends one WebSocket binary frame exactly as given.
    public func sendRaw(binary: ByteBuffer) async throws {
        try await self.session.send(binary: binary)
    }

    /// Sends DISCONNECT (`41`, when the namespace is connected), closes the WebSocket with 1000
    /// and waits for the server to finish the close; returns the server's close code.
    ///
    /// Does nothing but report the code when the connection has already ended.
    /// - Throws: `.timeout` if the server does not finish the close in time (the connection is then torn down).
    @discardableResult
    public func close(timeout: Duration = .seconds(30)) async throws -> Int? {
        await self.session.beginClose()
        do {
            return try await self.waitForClose(timeout: timeout)
        } catch let error as SocketIOTestError {
            await self.session.abort()
            throw error
        }
    }

    /// Waits for the WebSocket to end and returns the server's close code (e.g. 1009 for a frame
    /// over `maxPayload`), or nil when the connection ended without a close frame.
    public func waitForClose(timeout: Duration = .seconds(30)) async throws -> Int? {
        guard case .closed(let code, _) = try await self.session.wait(for: .close, timeout: timeout) else {
            throw SocketIOTestError.protocolViolation("the close wait returned something else")
        }
        return code
    }

    /// Whether the WebSocket has ended.
    public var isClosed: Bool {
        get async { await self.session.closeState != nil }
    }

    /// Waits for the oldest unconsumed server ping (`2`); pings are answered when `autoPong` is on.
    public func nextPing(timeout: Duration = .seconds(60)) async throws {
        _ = try await self.session.wait(for: .ping, timeout: timeout)
    }

    /// How many pings the server has sent.
    public var pingsReceived: Int {
        get async { await self.session.pingsReceived }
    }

    /// Turns the automatic `3` answer to server pings on or off.
    public func setAutoPong(_ enabled: Bool) async {
        await self.session.setAutoPong(enabled)
    }
}
