import HTTPTypes
import RoomcastCore
import SocketIOServer

/// The gateway as an Engine.IO application: session ids that name this node, and a Socket.IO
/// connection per session, authenticated by the token of its CONNECT or of the request that
/// opened it.
struct GatewaySocketApplication: EngineIOApplication {
    let services: SocketServices

    func makeSessionID() -> String {
        EngineIOSessionID.make(on: services.nodeID)
    }

    func handler(for session: SocketSession, opening: EngineIOOpening) -> any EngineIOSessionHandler {
        SocketConnection(session: session, services: services, upgradeToken: opening.token)
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
            pollingQueueBytes: outboundQueueBytes, expiryWarning: expiryWarning
        )
    }
}

extension StreamOffset {
    /// The offset as the Engine.IO session compares positions while a socket joins a channel.
    var position: StreamPosition {
        StreamPosition(major: milliseconds, minor: sequence)
    }
}
