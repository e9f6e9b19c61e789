import Foundation
import Logging
import NIOCore
import NIOWebSocket
import RoomcastCore
import SocketIO
import SocketIOServer
import Synchronization

/// The gateway's side of one Socket.IO connection (the library's `SocketIOConnection` decodes,
/// orders and closes): CONNECT with a token, the events of the contract, and what a socket
/// leaves behind when it goes.
final class SocketConnection: SocketIOHandler {
    let services: SocketServices
    let session: SocketSession
    private let state: SocketState
    /// Made when a line is logged (a connection's few lines): a logger kept per connection,
    /// with its own metadata, would be memory per idle connection.
    private var logger: Logger { state.logger }

    init(session: SocketSession, services: SocketServices, upgradeToken: String?) {
        self.session = session
        self.services = services
        self.state = SocketState(session: session, services: services, upgradeToken: upgradeToken)
    }

    // MARK: Socket.IO

    func connect(namespace: String, auth: ByteBuffer?) async -> Bool {
        await connect(auth: auth, state: state)
        return state.user != nil
    }

    func event(_ event: SocketIOEvent) async {
        guard event.attachments == nil else {
            // Decoded and answered like any bad payload: every event of the contract takes one
            // JSON object and none carries binary data.
            let error = RoomcastError(.binaryNotSupported, "the event '\(event.name)' takes one JSON object, without binary attachments")
            return refuse(error, event: event.name, payload: nil, ackId: event.ackId)
        }
        await handleEvent(event.name, arguments: event.arguments, ackId: event.ackId, state: state)
    }

    func disconnect(namespace: String) async {
        await state.disconnect()
    }

    func closed() async {
        await state.disconnect()
        logger.debug("socket closed")
    }

    /// What cannot be decoded ends the connection (the library closes it), as in the reference
    /// server: a client that sends it is broken, and an answer it cannot tie to anything would
    /// only hide that. What decodes but is wrong (an unknown event, a bad payload) is answered
    /// and the socket stays.
    func undecodable(_ reason: String) async {
        GatewayMetrics.socketRejections.increment(RoomcastError.Code.malformedPacket.rawValue)
        logger.debug("undecodable packet: closing", metadata: ["reason": .string(reason)])
    }

    /// The library answered the reference's `44/<nsp>,{"message":"Invalid namespace"}`.
    func refused(namespace: String) async {
        GatewayMetrics.socketRejections.increment("invalid_namespace")
        logger.debug("CONNECT to a namespace the gateway does not serve", metadata: ["namespace": .string(namespace)])
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

    // MARK: Events

    private func handleEvent(_ name: String, arguments: [ByteBuffer], ackId: Int?, state: SocketState) async {
        GatewayMetrics.eventsReceived.increment(name)
        do throws(RoomcastError) {
            if SocketEvents.previewEvents.contains(name) {
                try state.admitPreview()
            } else {
                try state.admitEvent()
            }
            guard let payload = arguments.first else {
                throw RoomcastError(.invalidPayload, "the event '\(name)' needs a JSON object payload")
            }
            let data = try await services.events.handle(name, state: state, payload: payload)
            if let id = ackId {
                state.session.send(SocketReply.ack(id: id, data: data))
            }
        } catch {
            refuse(error, event: name, payload: arguments.first, ackId: ackId)
        }
    }

    /// A refused event is answered through its ack when it asked for one, else with an `error`
    /// event naming it.
    private func refuse(_ error: RoomcastError, event: String, payload: ByteBuffer?, ackId: Int?) {
        GatewayMetrics.socketRejections.increment(error.code.rawValue)
        logRejected(error, event: event, payload: payload)
        if let id = ackId {
            session.send(SocketReply.ack(id: id, error: error))
        } else {
            session.send(SocketReply.errorEvent(error, event: event))
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

    private struct ConnectAuth: Decodable {
        var token: String?
    }

    private func connect(auth: ByteBuffer?, state: SocketState) async {
        if state.user != nil {
            state.session.send(SocketIOFrame.connect(sid: state.session.id))
            return
        }
        do throws(RoomcastError) {
            let authToken = auth.flatMap { try? JSONCoding.decode(ConnectAuth.self, from: $0) }?.token
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
