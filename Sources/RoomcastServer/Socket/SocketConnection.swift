import Foundation
import Logging
import NIOCore
import NIOWebSocket
import RoomcastCore
import SocketIO
import SocketIOServer
import Synchronization
import WebSocketServer

/// The Socket.IO side of one connection: packets are handled one at a time, in order, by a task
/// that runs only while there are packets (an idle connection has no task at all).
final class SocketConnection: EngineIOSessionHandler {
    /// What the connection's task handles next.
    enum Inbound {
        /// A Socket.IO packet (an Engine.IO message's body).
        case packet(ByteBuffer)
        /// A binary WebSocket frame: an attachment of a refused binary packet; any other ends
        /// the connection, as binary data outside a binary packet cannot be decoded.
        case binaryFrame
        /// Input that is no Engine.IO packet: ends the connection, in order with the packets
        /// before it.
        case refused(RoomcastError)
        /// The connection closed: leave everything.
        case disconnect
    }

    /// Packets waiting, what they weigh, and whether a task is handling them.
    private struct Inbox {
        var pending: [Inbound] = []
        /// Against `socket.inbound_queue_bytes`: a client that sends without waiting for its
        /// acks is closed (1008) past it.
        var budget: OutboundBudget
        var isHandling = false
        var ended = false
    }

    let services: SocketServices
    let session: SocketSession
    private let inbox: Mutex<Inbox>
    private let state: SocketState
    /// Made when a line is logged (a connection's few lines): a logger kept per connection,
    /// with its own metadata, would be memory per idle connection.
    private var logger: Logger { state.logger }

    init(session: SocketSession, services: SocketServices, upgradeToken: String?) {
        self.session = session
        self.services = services
        self.state = SocketState(session: session, services: services, upgradeToken: upgradeToken)
        self.inbox = Mutex(Inbox(budget: OutboundBudget(limit: services.settings.inboundQueueBytes)))
    }

    // MARK: Engine.IO

    func received(_ inbound: EngineIOInbound) {
        switch inbound {
        case .message(let body): enqueue(.packet(body))
        case .binary: enqueue(.binaryFrame)
        case .undecodable(let reason): enqueue(.refused(RoomcastError(.malformedPacket, reason)))
        case .ended: enqueue(.disconnect)
        }
    }

    func credentialExpiring(at seconds: Int64) {
        session.send(SocketReply.authExpiring(at: seconds))
    }

    func credentialExpired() {
        // As a server-side disconnect: socket.io-client then waits for the app to connect again
        // with a new token instead of retrying this one.
        session.send(SocketReply.errorEvent(RoomcastError(.tokenExpired, "token expired: connect again with a new token"), event: nil))
        session.send(SocketIOFrame.disconnect())
    }

    /// Queues a packet (or the end) for the connection's task, starting it if it is not running.
    private func enqueue(_ item: Inbound) {
        let start = inbox.withLock { inbox -> Bool in
            guard !inbox.ended else { return false }
            switch item {
            case .disconnect:
                // Always taken, full inbox or not: it is what leaves the rooms and the counts.
                inbox.ended = true
            case .packet(let body):
                guard inbox.budget.take(body) else {
                    session.close(.policyViolation, reason: "too many packets waiting: wait for acks before sending more")
                    return false
                }
            case .binaryFrame, .refused:
                guard inbox.budget.take(ByteBuffer()) else { return false }
            }
            inbox.pending.append(item)
            guard !inbox.isHandling else { return false }
            inbox.isHandling = true
            return true
        }
        if start {
            Task { await self.handlePending() }
        }
    }

    /// Handles packets until none is left. Only one such task runs at a time (`isHandling`), so
    /// the state has one user at a time, in the order the packets came.
    private func handlePending() async {
        while let item = nextPending() {
            switch item {
            case .packet(let body):
                await handleSocketIO(body, state: state)
            case .binaryFrame:
                if state.attachmentsToSkip > 0 {
                    state.attachmentsToSkip -= 1
                } else {
                    closeUndecodable(RoomcastError(.malformedPacket, "binary data outside a binary packet"), state: state)
                }
            case .refused(let error):
                closeUndecodable(error, state: state)
            case .disconnect:
                await state.disconnect()
                logger.debug("socket closed")
            }
        }
    }

    private func nextPending() -> Inbound? {
        inbox.withLock { inbox in
            guard !inbox.pending.isEmpty else {
                inbox.isHandling = false
                // Give the storage back: most sockets idle between bursts (memory per socket).
                inbox.pending = []
                return nil
            }
            let item = inbox.pending.removeFirst()
            switch item {
            case .packet(let body): inbox.budget.give(back: body)
            case .binaryFrame, .refused: inbox.budget.give(back: ByteBuffer())
            case .disconnect: break
            }
            return item
        }
    }

    // MARK: Packets

    private func handleSocketIO(_ body: ByteBuffer, state: SocketState) async {
        let packet: SocketIOPacket
        do {
            packet = try SocketIOPacket(decoding: body)
        } catch {
            let refusal = RoomcastError(RoomcastError.Code(rawValue: error.code), error.message)
            if let binary = SocketIOBinaryHeader(decoding: body) {
                rejectBinary(binary, refusal, state: state)
            } else {
                closeUndecodable(refusal, state: state)
            }
            return
        }
        switch packet.kind {
        case .connect:
            await connect(packet, state: state)
        case .disconnect:
            await state.disconnect()
        case .event:
            // Socket.IO servers ignore events for a namespace the socket has not connected to.
            guard state.user != nil, packet.namespace == "/", let name = packet.eventName else { return }
            await handleEvent(name, packet: packet, state: state)
        case .ack, .connectError:
            break
        }
    }

    private func handleEvent(_ name: String, packet: SocketIOPacket, state: SocketState) async {
        GatewayMetrics.eventsReceived.increment(name)
        do throws(RoomcastError) {
            if SocketEvents.previewEvents.contains(name) {
                try state.admitPreview()
            } else {
                try state.admitEvent()
            }
            guard let payload = packet.arguments.first else {
                throw RoomcastError(.invalidPayload, "the event '\(name)' needs a JSON object payload")
            }
            let data = try await services.events.handle(name, state: state, payload: payload)
            if let id = packet.ackId {
                state.session.send(SocketReply.ack(id: id, data: data))
            }
        } catch {
            GatewayMetrics.socketRejections.increment(error.code.rawValue)
            logRejected(error, event: name, payload: packet.arguments.first)
            if let id = packet.ackId {
                state.session.send(SocketReply.ack(id: id, error: error))
            } else {
                state.session.send(SocketReply.errorEvent(error, event: name))
            }
        }
    }

    /// One line per refused event: debug for a client's mistake, warning when the node failed.
    private func logRejected(_ error: RoomcastError, event: String?, payload: ByteBuffer?) {
        let level: Logger.Level = error.code == .internalError || error.code == .unavailable ? .warning : .debug
        let logger = self.logger
        guard logger.logLevel <= level else { return }
        var metadata: Logger.Metadata = ["code": .string(error.code.rawValue), "reason": .string(error.message)]
        if let event { metadata["event"] = .string(event) }
        if let room = payload.flatMap({ try? JSONCoding.decode(RoomReference.self, from: $0) })?.roomId {
            metadata["room"] = .string(room)
        }
        logger.log(level: level, "event rejected", metadata: metadata)
    }

    /// The room an event names, for its log line.
    private struct RoomReference: Decodable {
        var roomId: String?
    }

    /// Bad input before CONNECT is answered with CONNECT_ERROR, after it with an `error` event.
    private func reject(_ error: RoomcastError, state: SocketState) {
        GatewayMetrics.socketRejections.increment(error.code.rawValue)
        logRejected(error, event: nil, payload: nil)
        state.session.send(state.user == nil ? SocketReply.connectError(error) : SocketReply.errorEvent(error, event: nil))
    }

    /// What cannot be decoded ends the connection, as in the reference server (socket.io
    /// `lib/client.ts` `onerror`, engine.io `lib/socket.ts`): a client that sends it is broken,
    /// and an answer it cannot tie to anything would only hide that. What decodes but is wrong
    /// (an unknown event, a bad payload) is answered and the socket stays.
    private func closeUndecodable(_ error: RoomcastError, state: SocketState) {
        GatewayMetrics.socketRejections.increment(error.code.rawValue)
        logger.debug("undecodable packet: closing", metadata: ["code": .string(error.code.rawValue), "reason": .string(error.message)])
        state.session.close(.protocolError, reason: error.message)
    }

    /// A binary packet is refused like any bad event: through its ack when it asked for one,
    /// else with an `error` event naming it. Its attachments, which follow, are skipped.
    private func rejectBinary(_ header: SocketIOBinaryHeader, _ error: RoomcastError, state: SocketState) {
        state.attachmentsToSkip = header.attachments
        guard state.user != nil, header.kind == .event, header.namespace == "/" else {
            return reject(error, state: state)
        }
        GatewayMetrics.socketRejections.increment(error.code.rawValue)
        logRejected(error, event: header.eventName, payload: nil)
        if let id = header.ackId {
            state.session.send(SocketReply.ack(id: id, error: error))
        } else {
            state.session.send(SocketReply.errorEvent(error, event: header.eventName))
        }
    }

    private struct ConnectAuth: Decodable {
        var token: String?
    }

    private func connect(_ packet: SocketIOPacket, state: SocketState) async {
        guard packet.namespace == "/" else {
            // Exactly the reference server's refusal (socket.io `lib/client.ts`), no `data`.
            GatewayMetrics.socketRejections.increment("invalid_namespace")
            state.session.send(SocketIOFrame.connectError(message: "Invalid namespace", namespace: packet.namespace))
            return
        }
        if state.user != nil {
            state.session.send(SocketIOFrame.connect(sid: state.session.id))
            return
        }
        do throws(RoomcastError) {
            let authToken = packet.data.flatMap { try? JSONCoding.decode(ConnectAuth.self, from: $0) }?.token
            let verified: TokenService.Verified
            if let authToken {
                verified = try services.tokens.verifyToken(authToken)
            } else if let fromUpgrade = try state.upgradeIdentity() {
                verified = fromUpgrade
            } else {
                throw RoomcastError(.unauthorized, "authentication required: send {\"token\": \"<jwt>\"} with CONNECT")
            }
            // Stored first: the CONNECT frame goes out within `connect`, and the timers must see
            // the token's expiry and the connect by then. Undone below if it fails.
            state.session.tokenExpiry.store(verified.expirySeconds, ordering: .relaxed)
            state.session.hasConnected.store(true, ordering: .relaxed)
            try await state.connect(as: verified.user, sending: SocketIOFrame.connect(sid: RandomID.make()))
            // Now the engine's timer follows it: its `auth:expiring` comes after the CONNECT frame.
            state.session.setTokenExpiry(verified.expirySeconds)
            logger.info("socket connected")
        } catch {
            state.session.setTokenExpiry(.max)
            state.session.hasConnected.store(false, ordering: .relaxed)
            GatewayMetrics.socketRejections.increment(error.code.rawValue)
            logger.info("socket connect refused", metadata: ["code": .string(error.code.rawValue)])
            state.session.send(SocketReply.connectError(error))
        }
    }
}
