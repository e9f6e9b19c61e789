import HummingbirdWSClient
import NIOCore
import SocketIO

// Inbound frames: Engine.IO first, then Socket.IO inside message packets, decoded with the
// project's codec. Anything it rejects, or that breaks the contract's shapes, is recorded as a
// protocol violation (`fail`), which every later wait reports.
extension SocketIOTestSession {
    /// Decodes one inbound WebSocket message and files what it carries.
    func receive(_ message: WebSocketMessage) async {
        guard case .text(let text) = message else {
            self.fail(.protocolViolation("binary WebSocket frame; the server only sends text"))
            return
        }
        self.inbox.recordFrame(text)
        let packet: EngineIOPacket
        do {
            packet = try EngineIOPacket(decoding: ByteBuffer(string: text))
        } catch {
            self.fail(.protocolViolation("\(error) in frame \(text.prefix(200))"))
            return
        }
        switch packet {
        case .open(let data):
            guard !self.handshakeReceived else { return self.fail(.protocolViolation("a second open packet: \(text)")) }
            do {
                let handshake = try EngineIOHandshake(openPacketJSON: String(buffer: data))
                self.handshakeReceived = true
                self.deliver(.handshake(handshake), to: .handshake)
            } catch {
                self.fail(error)
            }
        case _ where !self.handshakeReceived:
            self.fail(.protocolViolation("the first frame must be the open packet, got \(text.prefix(200))"))
        case .ping(let data):
            self.pingsReceived += 1
            self.deliver(.ping, to: .ping)
            if self.autoPong {
                // A failed pong means the connection is going away; the close settles the waiters.
                try? await self.send(text: EngineIOPacket.pong(data).encoded())
            }
        case .message(let body):
            self.receiveSocketIO(body, frame: text)
        case .close:
            // The server ends the session; the WebSocket close that follows settles the waiters.
            break
        case .pong, .upgrade, .noop, .binary:
            self.fail(.protocolViolation("unexpected packet on a WebSocket-only session: \(text)"))
        }
    }

    private func receiveSocketIO(_ body: ByteBuffer, frame: String) {
        let packet: SocketIOPacket
        do {
            packet = try SocketIOPacket(decoding: body)
        } catch {
            return self.fail(.protocolViolation("\(error) in frame \(frame.prefix(200))"))
        }
        let json = packet.data.flatMap { try? JSONValue(String(buffer: $0)) }
        switch packet.kind {
        case .connect:
            guard let sid = json?["sid"].stringValue else {
                return self.fail(.protocolViolation("CONNECT reply without a sid: \(frame)"))
            }
            if packet.namespace == self.namespace {
                self.socketId = sid
                self.disconnectedByServer = false
            }
            self.deliver(.connected(sid: sid), to: .connectReply(namespace: packet.namespace))
        case .connectError:
            // v5 sends `{"message":…,"data":…}`; a bare string is the older form some servers
            // (python-socketio for unknown namespaces) still send, read as a message without code.
            guard let message = json?["message"].stringValue ?? json?.stringValue else {
                return self.fail(.protocolViolation("CONNECT_ERROR without a message: \(frame)"))
            }
            let item = SocketIOTestInbox.Item.refused(message: message, code: json?["data"]["code"].stringValue)
            self.deliver(item, to: .connectReply(namespace: packet.namespace))
        case .event, .ack:
            guard packet.namespace == self.namespace else {
                return self.fail(.protocolViolation("packet for namespace \(packet.namespace), client is on \(self.namespace): \(frame)"))
            }
            // The contract gives every event and ack exactly one argument, a JSON object.
            guard let argument = packet.arguments.first.map({ String(buffer: $0) }) else {
                return self.fail(.protocolViolation("event or ack without an argument: \(frame)"))
            }
            if packet.kind == .ack, let id = packet.ackId {
                self.deliver(.json(argument), to: .ack(id))
            } else if let name = packet.eventName {
                self.inbox.recordEvent(name: name, payload: argument)
                self.deliver(.json(argument), to: .event(name))
            }
        case .disconnect:
            guard packet.namespace == self.namespace else { return }
            self.socketId = nil
            self.disconnectedByServer = true
            self.failWaiters(with: .disconnected) { key in
                switch key {
                case .event, .ack: true
                default: false
                }
            }
        }
    }
}
