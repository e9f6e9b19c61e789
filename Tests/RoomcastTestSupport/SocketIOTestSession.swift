import HTTPTypes
import HummingbirdWSClient
import HummingbirdWSCompression
import Logging
import NIOCore
import NIOWebSocket
import SocketIO

/// The live connection behind a `SocketIOTestClient`.
///
/// Concurrency: the WebSocket runs in a detached task (`start`) whose handler feeds every inbound
/// message, in order, into this actor (`receive`). Everything received lands in `inbox` or goes
/// straight to a waiting test call (`deliver`); tests reach the actor only through the client's
/// async methods, so all state is touched on the actor alone. The run task holds the session
/// weakly: dropping the last client ends the connection (`deinit` cancels the task).
actor SocketIOTestSession {
    /// Frames up to this size are accepted and sent unfragmented, far above any server limit,
    /// so tests can send oversized frames and see the server refuse them.
    static let maxFrameSize = 16 << 20

    /// The Socket.IO namespace for events, acks and the DISCONNECT sent by `close`.
    let namespace: String
    var autoPong: Bool
    var inbox = SocketIOTestInbox()
    var waiters: [UInt64: Waiter] = [:]
    var nextWaiterID: UInt64 = 0
    /// Set once the WebSocket has ended, with the server's close code when it sent one.
    var closeState: (code: Int?, reason: String?)?
    var handshakeReceived = false
    /// The first protocol violation seen; every later wait fails with it.
    var failure: SocketIOTestError?
    var disconnectedByServer = false
    var socketId: String?
    var pingsReceived = 0
    private var writer: WebSocketOutboundWriter?
    private var runTask: Task<Void, Never>?
    private var nextAckID = 0

    init(namespace: String, autoPong: Bool) {
        self.namespace = namespace
        self.autoPong = autoPong
    }

    deinit {
        self.runTask?.cancel()
    }

    /// Opens the WebSocket in a background task; the open packet arrives through `receive`.
    func start(port: Int, path: String, headers: [String: String], compressed: Bool = false) throws(SocketIOTestError) {
        var fields = HTTPFields()
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) {
            guard let fieldName = HTTPField.Name(name) else {
                throw SocketIOTestError.connectionFailed(reason: "invalid header name \"\(name)\"")
            }
            fields.append(HTTPField(name: fieldName, value: value))
        }
        let configuration = WebSocketClientConfiguration(
            maxFrameSize: Self.maxFrameSize,
            additionalHeaders: fields,
            extensions: compressed ? [.perMessageDeflate(maxDecompressedFrameSize: Self.maxFrameSize)] : [],
            closeTimeout: .seconds(5)
        )
        let url = "ws://127.0.0.1:\(port)\(path)"
        let logger = Logger(label: "roomcast.test.socketio-client")
        self.runTask = Task.detached { [weak self] in
            let result: Result<WebSocketCloseFrame?, any Error>
            do {
                let closeFrame = try await WebSocketClient.connect(url: url, configuration: configuration, logger: logger) {
                    [weak self] inbound, outbound, _ in
                    await self?.attach(outbound)
                    // Returning from this handler makes the library close the WebSocket, so it
                    // keeps reading until the server closes (or `close()` completes the handshake).
                    for try await message in inbound.messages(maxSize: SocketIOTestSession.maxFrameSize) {
                        guard let self else { return }
                        await self.receive(message)
                    }
                }
                result = .success(closeFrame)
            } catch {
                result = .failure(error)
            }
            await self?.connectionEnded(result)
        }
    }

    /// Tears the connection down without a close handshake.
    func abort() {
        self.runTask?.cancel()
    }

    func setAutoPong(_ enabled: Bool) {
        self.autoPong = enabled
    }

    // MARK: Sending

    /// Sends the next ack id's event and returns that id.
    func emit(_ event: String, _ payloadJSON: String, wantsAck: Bool) async throws -> Int? {
        let ackId = wantsAck ? self.nextAckID : nil
        if wantsAck { self.nextAckID += 1 }
        let frame = SocketIOFrame.event(name: event, payload: payloadJSON.utf8, namespace: self.namespace, ackId: ackId)
        try await self.send(text: frame)
        return ackId
    }

    /// Sends CONNECT, `40` or `40/ns,` followed by the auth object when given.
    ///
    /// `SocketIOFrame` builds the server's side of CONNECT (`40{"sid":…}`), so the client's
    /// form is written here; Engine.IO still frames it.
    func sendConnect(auth: String?, namespace: String) async throws {
        var body = "0"
        if namespace != "/" && !namespace.isEmpty { body += "\(namespace)," }
        body += auth ?? ""
        try await self.send(text: EngineIOPacket.message(ByteBuffer(string: body)).encoded())
    }

    /// Sends one text frame exactly as given.
    func send(text: ByteBuffer) async throws {
        try await self.write(.custom(WebSocketFrame(fin: true, opcode: .text, data: text)))
    }

    /// Sends one binary frame exactly as given.
    func send(binary: ByteBuffer) async throws {
        try await self.write(.binary(binary))
    }

    /// Sends `41` when the namespace is connected, then a WebSocket close frame (1000).
    func beginClose() async {
        guard self.closeState == nil, let writer = self.writer else { return }
        if self.socketId != nil {
            try? await writer.write(.custom(WebSocketFrame(fin: true, opcode: .text, data: SocketIOFrame.disconnect(namespace: self.namespace))))
        }
        try? await writer.close(.normalClosure, reason: nil)
    }

    private func write(_ frame: WebSocketOutboundWriter.OutboundFrame) async throws {
        guard let writer = self.writer else {
            throw self.closeState.map { SocketIOTestError.closed(code: $0.code, reason: $0.reason) }
                ?? SocketIOTestError.connectionFailed(reason: "the WebSocket is not open yet")
        }
        do {
            try await writer.write(frame)
        } catch let error as CancellationError {
            throw error
        } catch {
            // The channel is closing or closed (the server may hang up mid-write, e.g. on an
            // oversized frame); `waitForClose` then tells how it ended.
            throw SocketIOTestError.closed(code: self.closeState?.code, reason: "write failed: \(error)")
        }
    }

    // MARK: Lifecycle

    private func attach(_ writer: WebSocketOutboundWriter) {
        self.writer = writer
    }

    private func connectionEnded(_ result: Result<WebSocketCloseFrame?, any Error>) {
        let code: Int?
        let reason: String?
        switch result {
        case .success(let frame):
            code = frame.map { Int(UInt16(webSocketErrorCode: $0.closeCode)) }
            reason = frame?.reason
        case .failure(let error):
            code = nil
            reason = String(describing: error)
        }
        self.closeState = (code, reason)
        self.writer = nil
        self.settleWaitersAfterClose()
    }
}
