import Foundation
import Logging
import NIOCore
import NIOWebSocket
import RoomcastCore
import ServiceLifecycle
import SocketIO
import Synchronization
import HummingbirdWebSocket

/// One WebSocket connection speaking Engine.IO v4 and Socket.IO v5.
///
/// Three tasks: this one reads and handles packets one at a time; a writer drains the session's
/// queue into the socket; a keep-alive sends Engine.IO pings and closes a socket that stops
/// answering (or never sends CONNECT).
struct SocketConnection {
    let services: SocketServices
    /// A token from the upgrade request (`Authorization` header or `token` query), used when the
    /// CONNECT packet carries none.
    let upgradeToken: String?

    /// Runs the connection until either side closes it.
    /// - Throws: the WebSocket protocol error that ended the read (bad UTF-8, a message too large
    ///   …), after the session is cleaned up, so the WebSocket layer closes with its code.
    func run(inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter) async throws {
        let settings = services.settings
        let (session, queue) = SocketSession.make(id: Self.randomID(), queueLimit: settings.outboundQueueLimit)
        var sessionLogger = services.logger
        sessionLogger[metadataKey: "sid"] = "\(session.id)"
        let logger = sessionLogger
        session.send(Self.openPacket(session.id, settings))

        // On SIGTERM the server stops accepting; open sockets are closed (1001, going away, unless
        // the WebSocket layer's own shutdown handler sends its 1000 first) so their clients
        // reconnect to another node instead of holding this one up.
        let readError: (any Error)? = await withGracefulShutdownHandler {
            // The writer is not cancelled with the timers: it drains what is queued and sends the
            // close frame (1001 on a drain), then ends because the closed queue ends.
            async let writing: Void = Self.write(queue, to: outbound, session: session, logger: logger)
            let readError = await withTaskGroup(of: Void.self, returning: (any Error)?.self) { group in
                // The state lives in this closure only: the reader is its one owner.
                let state = SocketState(session: session, services: services)
                group.addTask { await Self.keepAlive(session, settings) }
                var readError: (any Error)?
                do {
                    for try await message in RoomcastWebSocket.messages(inbound, maxPayload: settings.maxPayload) {
                        guard await handle(message, state: state, logger: logger) else { break }
                    }
                } catch {
                    logger.debug("socket read ended", metadata: ["error": "\(error)"])
                    readError = error
                }
                state.disconnect()
                session.close(.normalClosure, reason: "")
                group.cancelAll()
                return readError
            }
            await writing
            logger.debug("socket closed")
            return readError
        } onGracefulShutdown: {
            session.close(.goingAway, reason: "server shutting down")
        }
        if let readError { throw readError }
    }

    // MARK: Writer and keep-alive

    private static func write(_ queue: AsyncStream<SocketSession.Outbound>, to outbound: WebSocketOutboundWriter, session: SocketSession, logger: Logger) async {
        do {
            for await item in queue {
                switch item {
                case .frame(let frame):
                    try await RoomcastWebSocket.write(frame, opcode: .text, to: outbound)
                }
            }
            if let (code, reason) = session.closeReason, code != .normalClosure {
                logger.info("closing socket", metadata: ["reason": "\(reason)"])
                try await outbound.close(code, reason: reason)
            }
        } catch {
            logger.debug("socket write failed", metadata: ["error": "\(error)"])
        }
    }

    /// Engine.IO's timers, in one task rather than one each (a task per socket is memory per
    /// connection): the connect timeout, and a ping every `pingInterval` that must be answered
    /// within `pingTimeout`, counted from the check of the previous one.
    private static func keepAlive(_ session: SocketSession, _ settings: SocketSettings) async {
        let clock = ContinuousClock()
        let ping = EngineIOPacket.ping(nil).encoded()
        var connectDeadline: ContinuousClock.Instant? = clock.now + settings.connectTimeout
        var nextPing = clock.now + settings.pingInterval
        // While a ping is unanswered: the pong count when it went out, and its deadline.
        var awaiting: (pongs: UInt64, deadline: ContinuousClock.Instant)?
        while true {
            let timer = awaiting?.deadline ?? nextPing
            let wake = connectDeadline.map { min($0, timer) } ?? timer
            guard (try? await Task.sleep(until: wake, clock: clock)) != nil else { return }
            let now = clock.now
            if let deadline = connectDeadline, now >= deadline {
                connectDeadline = nil
                if !session.hasConnected.load(ordering: .relaxed) {
                    session.close(.policyViolation, reason: "no Socket.IO CONNECT within the connect timeout")
                    return
                }
            }
            if let pending = awaiting {
                guard now >= pending.deadline else { continue }
                if session.pongs.load(ordering: .relaxed) == pending.pongs {
                    session.close(.goingAway, reason: "ping timeout")
                    return
                }
                awaiting = nil
                nextPing = now + settings.pingInterval
            } else if now >= nextPing {
                awaiting = (session.pongs.load(ordering: .relaxed), now + settings.pingTimeout)
                session.send(ping)
            }
        }
    }

    // MARK: Packets

    /// Handles one WebSocket message; false when the connection should end.
    private func handle(_ message: WebSocketMessage, state: SocketState, logger: Logger) async -> Bool {
        let text: ByteBuffer
        switch message {
        case .text(let string):
            text = ByteBuffer(string: string)
        case .binary:
            reject(RoomcastError(.malformedPacket, "binary frames are not supported: send JSON text"), state: state)
            return true
        }
        let packet: EngineIOPacket
        do {
            packet = try EngineIOPacket(decoding: text)
        } catch {
            reject(RoomcastError(.malformedPacket, error.message), state: state)
            return true
        }
        switch packet {
        case .message(let body):
            await handleSocketIO(body, state: state, logger: logger)
        case .ping(let data):
            state.session.send(EngineIOPacket.pong(data).encoded())
        case .pong:
            state.session.pongs.add(1, ordering: .relaxed)
        case .close:
            return false
        case .open, .upgrade, .noop:
            break
        }
        return true
    }

    private func handleSocketIO(_ body: ByteBuffer, state: SocketState, logger: Logger) async {
        let packet: SocketIOPacket
        do {
            packet = try SocketIOPacket(decoding: body)
        } catch {
            reject(RoomcastError(RoomcastError.Code(rawValue: error.code), error.message), state: state)
            return
        }
        switch packet.kind {
        case .connect:
            await connect(packet, state: state, logger: logger)
        case .disconnect:
            state.disconnect()
        case .event:
            // Socket.IO servers ignore events for a namespace the socket has not connected to.
            guard state.user != nil, packet.namespace == "/", let name = packet.eventName else { return }
            await handleEvent(name, packet: packet, state: state)
        case .ack, .connectError:
            break
        }
    }

    private func handleEvent(_ name: String, packet: SocketIOPacket, state: SocketState) async {
        do throws(RoomcastError) {
            try state.admitEvent()
            guard let payload = packet.arguments.first else {
                throw RoomcastError(.invalidPayload, "the event '\(name)' needs a JSON object payload")
            }
            let data = try await services.events.handle(name, state: state, payload: payload)
            if let id = packet.ackId {
                state.session.send(SocketReply.ack(id: id, data: data))
            }
        } catch {
            if let id = packet.ackId {
                state.session.send(SocketReply.ack(id: id, error: error))
            } else {
                state.session.send(SocketReply.errorEvent(error, event: name))
            }
        }
    }

    /// Bad input before CONNECT is answered with CONNECT_ERROR, after it with an `error` event.
    private func reject(_ error: RoomcastError, state: SocketState) {
        state.session.send(state.user == nil ? SocketReply.connectError(error) : SocketReply.errorEvent(error, event: nil))
    }

    private struct ConnectAuth: Decodable {
        var token: String?
    }

    private func connect(_ packet: SocketIOPacket, state: SocketState, logger: Logger) async {
        guard packet.namespace == "/" else {
            state.session.send(SocketReply.connectError(RoomcastError(.init(rawValue: "invalid_namespace"), "Invalid namespace"), namespace: packet.namespace))
            return
        }
        if state.user != nil {
            state.session.send(SocketIOFrame.connect(sid: state.session.id))
            return
        }
        do throws(RoomcastError) {
            let authToken = packet.data.flatMap { try? JSONCoding.decode(ConnectAuth.self, from: $0) }?.token
            guard let token = authToken ?? upgradeToken else {
                throw RoomcastError(.unauthorized, "authentication required: send {\"token\": \"<jwt>\"} with CONNECT")
            }
            let userID = try await services.tokens.verify(token)
            guard let user = try await services.users.user(userID) else {
                throw RoomcastError(.unauthorized, "the token's user does not exist")
            }
            try await state.connect(as: user)
            state.session.hasConnected.store(true, ordering: .relaxed)
            state.session.send(SocketIOFrame.connect(sid: Self.randomID()))
            logger.info("socket connected", metadata: ["user": "\(user.id)"])
        } catch {
            logger.info("socket connect refused", metadata: ["code": "\(error.code)"])
            state.session.send(SocketReply.connectError(error))
        }
    }

    // MARK: Helpers

    private static func openPacket(_ sid: String, _ settings: SocketSettings) -> ByteBuffer {
        EngineIOHandshake(
            sid: sid,
            upgrades: [],
            pingInterval: settings.pingInterval.wholeMilliseconds,
            pingTimeout: settings.pingTimeout.wholeMilliseconds,
            maxPayload: settings.maxPayload
        ).packet.encoded()
    }

    /// 20 URL-safe random characters, like Engine.IO's own ids.
    static func randomID() -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        return String((0..<20).map { _ in alphabet.randomElement()! })
    }
}
