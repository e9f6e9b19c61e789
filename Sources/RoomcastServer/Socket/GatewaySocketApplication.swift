import Foundation
import HTTPTypes
import Logging
import Metrics
import NIOCore
import RoomcastCore
import SocketIO
import SocketIOServer

/// The gateway as an application of the Socket.IO server library: session ids that name this
/// node, the main namespace only, sockets authenticated by the token of their CONNECT or of the
/// request that opened their connection, the events of the contract handled per room in order,
/// and the hub (Redis pub/sub) as the namespace's adapter.
enum GatewaySocketApplication {
    /// The node's Socket.IO server, its namespace set up.
    static func makeServer(services: SocketServices) -> SocketServer {
        var configuration = SocketServer.Configuration(
            path: "/socket.io", engineIO: services.settings.engineIO, inboundQueueBytes: services.settings.inboundQueueBytes,
            metricsPrefix: "roomcast_"
        )
        let node = services.nodeID
        configuration.sessionID = { EngineIOSessionID.make(on: node) }
        // Kept only when the opening request has a token (memory per idle connection).
        configuration.handshake = { opening in opening.token.map(UpgradeCredential.token) }
        let hub = services.hub
        configuration.adapter = { _ in hub }
        let server = SocketServer(configuration: configuration)
        server.onUndecodable { reason in
            GatewayMetrics.socketRejections.increment(RoomcastError.Code.malformedPacket.rawValue)
            services.logger.debug("undecodable packet: closing", metadata: ["reason": .string(reason)])
        }
        server.onInvalidNamespace { namespace in
            GatewayMetrics.socketRejections.increment("invalid_namespace")
            services.logger.debug("CONNECT to a namespace the gateway does not serve", metadata: ["namespace": .string(namespace)])
        }
        let namespace = server.namespace("/", context: SocketState.self)
        // One slow room (its Redis master frozen, say) holds up only its own events.
        namespace.order(.perKey)
        namespace.onConnect { socket, request in
            await connect(socket, request, services: services)
        }
        namespace.onAnyEvent { socket, state, event in
            route(event, of: socket, state: state, services: services)
        }
        namespace.onDisconnect { _, state, reason in
            GatewayMetrics.socketDisconnects.increment(GatewayMetrics.metricValue(reason))
            await state.disconnect()
        }
        namespace.onDeadlineApproaching { socket, _, deadline in
            socket.send(SocketReply.authExpiring(at: Int64(deadline.timeIntervalSince1970.rounded(.up))))
        }
        namespace.onDeadline { socket, _ in
            // As a server-side disconnect: socket.io-client then waits for the app to connect again
            // with a new token instead of retrying this one.
            socket.send(SocketReply.errorEvent(RoomcastError(.tokenExpired, "token expired: connect again with a new token"), event: nil))
            socket.send(SocketIOFrame.disconnect())
        }
        return server
    }

    /// What the request that opened a connection carried, for a CONNECT packet that carries no
    /// token. Its bytes are kept only until a CONNECT succeeds (memory per idle socket); what is
    /// kept then is its verified user and expiry, because a client may CONNECT again on the same
    /// connection with no payload: Socket.IO-Client-Swift's `disconnect()` then `connect()`
    /// sends `41` then `40`, its token still in the connection's query or headers.
    enum UpgradeCredential: Sendable {
        case token(String)
        case verified(TokenService.Verified)
    }

    /// The `token` of a CONNECT's auth object, read without `JSONDecoder` (a connect's hot path);
    /// nil when the payload is not an object or its `token` is not a string.
    private static func token(in request: SocketIOConnectRequest) -> String? {
        request.auth.flatMap { JSONObjectReader(Array($0.readableBytesView)) }?.string("token")
    }

    /// CONNECT with a token: the socket is counted, its user read and its channel subscribed,
    /// then accepted; refused with `{message, data: {code}}` otherwise.
    private static func connect(
        _ socket: SocketIOSocket, _ request: SocketIOConnectRequest, services: SocketServices
    ) async -> SocketIOConnectDecision<SocketState> {
        do throws(RoomcastError) {
            let verified: TokenService.Verified
            if let token = token(in: request) {
                verified = try services.tokens.verifyToken(token)
            } else if let fromUpgrade = try upgradeIdentity(request, services: services) {
                verified = fromUpgrade
            } else {
                throw RoomcastError(.unauthorized, "authentication required: send {\"token\": \"<jwt>\"} with CONNECT")
            }
            // Applied once the CONNECT answer is sent: `auth:expiring` comes after it.
            socket.setDeadline(Date(timeIntervalSince1970: Double(verified.expirySeconds)))
            let state = try await SocketState.connect(socket, as: verified.user, services: services)
            settleUpgradeCredential(request, services: services)
            state.logger.info("socket connected")
            GatewayMetrics.socketConnects.increment()
            return .accept(state)
        } catch {
            GatewayMetrics.socketRejections.increment(error.code.rawValue)
            services.logger(socket: socket.sessionID, user: nil).info("socket connect refused", metadata: ["code": .string(error.code.rawValue)])
            return .refuse(error.message, data: ByteBuffer(string: "{\"code\":\"\(error.code.rawValue)\"}"))
        }
    }

    /// The opening request's credential, verified, for a CONNECT that carries no token; nil
    /// when that request had none.
    /// - Throws: `token_expired` once its expiry has passed, `unauthorized` for a bad token.
    static func upgradeIdentity(_ request: SocketIOConnectRequest, services: SocketServices, now: Date = .now) throws(RoomcastError) -> TokenService.Verified? {
        switch request.handshake as? UpgradeCredential {
        case .none:
            return nil
        case .token(let token):
            // A refusal is not kept: the token stays until it is used or the socket is gone.
            let verified = try services.tokens.verifyToken(token, now: now)
            request.handshake = UpgradeCredential.verified(verified)
            return verified
        case .verified(let verified):
            guard now < verified.expires else { throw RoomcastError(.tokenExpired, "token expired") }
            return verified
        }
    }

    /// Once connected, the token's bytes go; its identity stays if it is a good one.
    private static func settleUpgradeCredential(_ request: SocketIOConnectRequest, services: SocketServices) {
        guard case .token(let token) = request.handshake as? UpgradeCredential else { return }
        request.handshake = (try? services.tokens.verifyToken(token)).map(UpgradeCredential.verified)
    }

    // MARK: Events

    /// An event as it arrives: counted, checked against the socket's budget and decoded on the
    /// connection's event loop; what it does runs in its room's order. A refusal is answered at
    /// once.
    private static func route(_ event: SocketIOEvent, of socket: SocketIOSocket, state: SocketState, services: SocketServices) -> SocketIOEventRoute {
        let name = event.name
        let payload = event.arguments.json.first
        guard !event.arguments.isBinary else {
            // Answered like any bad payload: every event of the contract takes one JSON object
            // and none carries binary data. Counted as a rejection only.
            let error = RoomcastError(.binaryNotSupported, "the event '\(name)' takes one JSON object, without binary attachments")
            refuse(error, event: name, payload: nil, ackID: event.ackID, state: state)
            return .handled
        }
        GatewayMetrics.eventsReceived.increment(name)
        do throws(RoomcastError) {
            if SocketEvents.previewEvents.contains(name) {
                try state.admitPreview()
            } else {
                try state.admitEvent()
            }
            guard let payload else {
                throw RoomcastError(.invalidPayload, "the event '\(name)' needs a JSON object payload")
            }
            let prepared = try services.events.prepare(name, payload: payload)
            let ackID = event.ackID
            return .run(orderedBy: prepared.room) {
                do throws(RoomcastError) {
                    let data = try await prepared.run(state)
                    if let ackID { socket.send(SocketReply.ack(id: ackID, data: data)) }
                } catch {
                    refuse(error, event: name, payload: payload, ackID: ackID, state: state)
                }
            }
        } catch {
            refuse(error, event: name, payload: payload, ackID: event.ackID, state: state)
            return .handled
        }
    }

    /// A refused event is answered through its ack when it asked for one, else with an `error`
    /// event naming it.
    private static func refuse(_ error: RoomcastError, event: String, payload: ByteBuffer?, ackID: Int?, state: SocketState) {
        GatewayMetrics.socketRejections.increment(error.code.rawValue)
        logRejected(error, event: event, payload: payload, logger: state.logger)
        if let id = ackID {
            state.socket.send(SocketReply.ack(id: id, error: error))
        } else {
            state.socket.send(SocketReply.errorEvent(error, event: event))
        }
    }

    /// One line per refused event: debug for a client's mistake, warning when the node failed.
    private static func logRejected(_ error: RoomcastError, event: String?, payload: ByteBuffer?, logger: Logger) {
        let level: Logger.Level = error.code == .internalError || error.code == .unavailable ? .warning : .debug
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
}

extension EngineIOOpening {
    /// A token from the `Authorization: Bearer` header or the `token` query parameter.
    var token: String? {
        BearerToken(headers: headers)?.value ?? request.query["token"].flatMap { $0.isEmpty ? nil : $0 }
    }
}

extension SocketSettings {
    /// What the node's Engine.IO server tells and holds its sessions to.
    var engineIO: EngineIOSettings {
        EngineIOSettings(
            pingInterval: pingInterval, pingTimeout: pingTimeout, connectTimeout: connectTimeout, maxPayload: maxPayload,
            pollingQueueBytes: outboundQueueBytes, deadlineWarning: expiryWarning
        )
    }
}

extension StreamOffset {
    /// The offset as the library compares positions while a socket joins a channel.
    var position: BroadcastPosition {
        BroadcastPosition(major: milliseconds, minor: sequence)
    }
}

extension SocketServices {
    /// The node's socket logger with a socket's `socket` and, once connected, `user`: made when
    /// a line is logged, as a logger kept per connection would be memory per idle socket.
    func logger(socket: String, user: UserID?) -> Logger {
        var logger = self.logger
        logger[metadataKey: "socket"] = .string(socket)
        if let user { logger[metadataKey: "user"] = .string(user.rawValue) }
        return logger
    }
}
