import HTTPTypes
import RoomcastCore
import SocketIOServer

/// The gateway as a Socket.IO application: session ids that name this node, the main namespace
/// only, and a connection per session authenticated by the token of its CONNECT or of the
/// request that opened it.
struct GatewaySocketApplication: SocketIOApplication {
    let services: SocketServices

    func makeSessionID() -> String {
        EngineIOSessionID.make(on: services.nodeID)
    }

    func serves(namespace: String) -> Bool {
        namespace == "/"
    }

    func handler(for session: SocketSession, opening: EngineIOOpening) -> any SocketIOHandler {
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

    /// What the node's Socket.IO connections are held to.
    var socketIO: SocketIOSettings {
        SocketIOSettings(inboundQueueBytes: inboundQueueBytes)
    }
}

extension StreamOffset {
    /// The offset as the Engine.IO session compares positions while a socket joins a channel.
    var position: StreamPosition {
        StreamPosition(major: milliseconds, minor: sequence)
    }
}
