public import SocketIO

/// A real Socket.IO v5 client over an Engine.IO v4 WebSocket, for integration tests.
///
/// ```swift
/// let client = try await SocketIOTestClient.connect(port: gateway.port, auth: #"{"token":"\#(token)"}"#)
/// let ack = try JSONValue(await client.emitWithAck("room:join", #"{"roomId":"\#(roomId)"}"#))
/// #expect(ack["data"]["roomId"] == .string(roomId))
/// let message = try JSONValue(await client.nextEvent("message:new"))
/// try await client.close()
/// ```
///
/// Concurrency: the connection is an actor (`SocketIOTestSession`) fed by a background task that
/// reads the WebSocket; this class is an immutable, `Sendable` handle to it, so one client may be
/// used from several tasks. Server pings are answered automatically (unless `autoPong` is off).
/// Inbound events are queued per name until a test asks for them. Dropping the last reference
/// tears the connection down; call `close()` for a clean close handshake.
///
/// Inbound frames are decoded with the project's `SocketIO` codec. A frame it rejects, or one that
/// breaks the contract's shapes (an event without an argument, a CONNECT reply without a sid), is
/// a protocol violation: every later wait throws `.protocolViolation` describing it.
///
/// Every error thrown is a `SocketIOTestError`, except `CancellationError` when the calling task is cancelled.
public final class SocketIOTestClient: Sendable {
    /// The path real clients use: WebSocket transport, Engine.IO v4.
    public static let defaultPath = "/socket.io/?EIO=4&transport=websocket"

    /// The Engine.IO open packet the server sent.
    public let handshake: EngineIOHandshake
    /// The namespace events and acks use (`/` unless given at creation).
    public let namespace: String
    let session: SocketIOTestSession

    private init(session: SocketIOTestSession, handshake: EngineIOHandshake) {
        self.session = session
        self.handshake = handshake
        self.namespace = session.namespace
    }

    /// Opens a WebSocket to `127.0.0.1:port`, reads the open packet and joins the namespace.
    /// - Parameters:
    ///   - path: request path and query of the upgrade request.
    ///   - headers: extra upgrade request headers, e.g. `Authorization: Bearer …`.
    ///   - auth: raw JSON object sent with CONNECT, e.g. `{"token":"…"}`; nil sends a bare `40`.
    ///   - namespace: `/` sends `40…`, anything else `40/ns,…`.
    ///   - autoPong: answer server pings; off lets a test watch the ping timeout close the socket.
    ///   - timeout: for the open packet and for the CONNECT reply, each.
    ///   - compressed: offer permessage-deflate (swift-websocket's client extension), which
    ///     compresses what the client sends and reads what the server compressed.
    /// - Throws: `SocketIOTestError.connectError(message:code:)` when the server answers `44`.
    public static func connect(
        port: Int,
        path: String = defaultPath,
        headers: [String: String] = [:],
        auth: String? = nil,
        namespace: String = "/",
        autoPong: Bool = true,
        timeout: Duration = .seconds(30),
        compressed: Bool = false
    ) async throws -> SocketIOTestClient {
        let client = try await self.open(
            port: port, path: path, headers: headers, namespace: namespace, autoPong: autoPong, timeout: timeout, compressed: compressed
        )
        do {
            _ = try await client.sendConnect(auth: auth, timeout: timeout)
        } catch {
            await client.session.abort()
            throw error
        }
        return client
    }

    /// Opens the Engine.IO session only (open packet read, no CONNECT sent), for protocol tests.
    ///
    /// Parameters as for `connect`.
    public static func open(
        port: Int,
        path: String = defaultPath,
        headers: [String: String] = [:],
        namespace: String = "/",
        autoPong: Bool = true,
        timeout: Duration = .seconds(30),
        compressed: Bool = false
    ) async throws -> SocketIOTestClient {
        let session = SocketIOTestSession(namespace: namespace, autoPong: autoPong)
        try await session.start(port: port, path: path, headers: headers, compressed: compressed)
        do {
            guard case .handshake(let handshake) = try await session.wait(for: .handshake, timeout: timeout) else {
                throw SocketIOTestError.protocolViolation("the open packet wait returned something else")
            }
            return SocketIOTestClient(session: session, handshake: handshake)
        } catch {
            await session.abort()
            throw error
        }
    }

    // MARK: Namespace

    /// Sends CONNECT and waits for the reply; returns the Socket.IO sid from `40{"sid":…}`.
    /// - Parameters:
    ///   - auth: raw JSON object appended to the packet, or nil for none.
    ///   - namespace: defaults to the client's; another one tests refusal (`invalid_namespace`).
    /// - Throws: `SocketIOTestError.connectError(message:code:)` when the server answers `44`.
    @discardableResult
    public func sendConnect(auth: String? = nil, namespace: String? = nil, timeout: Duration = .seconds(30)) async throws -> String {
        let namespace = namespace ?? self.namespace
        try await self.session.sendConnect(auth: auth, namespace: namespace)
        return try await self.nextConnectReply(namespace: namespace, timeout: timeout)
    }

    /// Waits for the next CONNECT reply, e.g. after a CONNECT sent with `sendRaw(text:)`; returns the sid.
    /// - Throws: `SocketIOTestError.connectError(message:code:)` when the server answers `44`.
    @discardableResult
    public func nextConnectReply(namespace: String? = nil, timeout: Duration = .seconds(30)) async throws -> String {
        let key = SocketIOTestInbox.Key.connectReply(namespace: namespace ?? self.namespace)
        switch try await self.session.wait(for: key, timeout: timeout) {
        case .connected(let sid): return sid
        case .refused(let message, let code): throw SocketIOTestError.connectError(message: message, code: code)
        default: throw SocketIOTestError.protocolViolation("the CONNECT reply wait returned something else")
        }
    }

    /// The Socket.IO sid of the namespace connection, nil before CONNECT succeeds or after a `41`.
    public var socketId: String? {
        get async { await self.session.socketId }
    }

    // MARK: Events

    /// Sends `42["event",payload]` without an ack id.
    /// - Parameter payloadJSON: one JSON value, sent verbatim (it may be invalid on purpose).
    public func emit(_ event: String, _ payloadJSON: String) async throws {
        _ = try await self.session.emit(event, payloadJSON, wantsAck: false)
    }

    /// Sends `42<id>["event",payload]` and returns the raw JSON of the ack's first argument.
    ///
    /// Ack ids count up from 0 per client.
    public func emitWithAck(_ event: String, _ payloadJSON: String, timeout: Duration = .seconds(30)) async throws -> String {
        guard let id = try await self.session.emit(event, payloadJSON, wantsAck: true) else {
            throw SocketIOTestError.protocolViolation("no ack id was assigned")
        }
        return try await self.nextAck(id, timeout: timeout)
    }

    /// Waits for `43<id>[…]` and returns its first argument's raw JSON (for acks asked for with `sendRaw`).
    public func nextAck(_ id: Int, timeout: Duration = .seconds(30)) async throws -> String {
        try await self.json(from: self.session.wait(for: .ack(id), timeout: timeout))
    }

    /// The raw JSON first argument of the oldest unconsumed event named `name`, waiting for one if needed.
    public func nextEvent(_ name: String, timeout: Duration = .seconds(30)) async throws -> String {
        try await self.json(from: self.session.wait(for: .event(name), timeout: timeout))
    }

    /// Every `name` event received so far, in order, including those `nextEvent` already returned.
    public func events(named name: String) async -> [String] {
        await self.session.inbox.eventHistory[name] ?? []
    }

    /// Every event received so far, of any name, in arrival order (to check order across names).
    public func allEvents() async -> [(name: String, payload: String)] {
        await self.session.inbox.eventLog
    }

    /// Succeeds when no `name` event is queued or arrives within `within`.
    /// - Throws: `SocketIOTestError.unexpectedEvent` (consuming that event), or the connection's end.
    public func expectNoEvent(_ name: String, within: Duration) async throws {
        let payload: String
        do {
            payload = try await self.nextEvent(name, timeout: within)
        } catch SocketIOTestError.timeout {
            return
        }
        throw SocketIOTestError.unexpectedEvent(name: name, payload: payload)
    }

    private func json(from item: SocketIOTestInbox.Item) throws -> String {
        guard case .json(let payload) = item else {
            throw SocketIOTestError.protocolViolation("an event or ack wait returned something else")
        }
        return payload
    }
}
