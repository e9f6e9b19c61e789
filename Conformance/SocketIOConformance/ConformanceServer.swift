import Foundation
import Hummingbird
import Logging
import NIOCore
import NIOWebSocket
import SocketIO
import SocketIOServer
import Synchronization
import WebSocketServer

/// The test server of the official Engine.IO v4 and Socket.IO v5 protocol suites
/// (socketio/socket.io `docs/engine.io-protocol/v4-test-suite`, `docs/socket.io-protocol/v5-test-suite`),
/// on the `SocketIOServer` library: an Engine.IO echo at `/engine.io/`, and at `/socket.io/` the
/// Socket.IO server the v5 suite's document describes, with the suites' timings. Never part of
/// `roomcast`; `scripts/conformance.sh` runs it and the port of the suites against it.
///
///     roomcast-conformance [--host 127.0.0.1] [--port 3000]
///
/// `--port 0` takes any free port; the ready line says which:
/// `conformance server ready on http://127.0.0.1:PORT/`.
@main
struct ConformanceServer {
    /// The suites' `PING_INTERVAL`, `PING_TIMEOUT`, `maxPayload` and `connectTimeout`.
    static let settings = EngineIOSettings(
        pingInterval: .milliseconds(300), pingTimeout: .milliseconds(200), connectTimeout: .milliseconds(1000), maxPayload: 1_000_000,
        pollingQueueBytes: 4 * 1_000_000
    )

    static func main() async throws {
        var host = "127.0.0.1"
        var port = 3000
        var arguments = CommandLine.arguments.dropFirst()
        while let flag = arguments.popFirst() {
            guard let value = arguments.popFirst() else { fail("\(flag) needs a value") }
            switch flag {
            case "--host": host = value
            case "--port":
                guard let number = Int(value), (0...65535).contains(number) else { fail("--port: '\(value)' is not a port") }
                port = number
            default: fail("unknown argument '\(flag)'; usage: roomcast-conformance [--host H] [--port N]")
            }
        }
        var logger = Logger(label: "conformance")
        logger.logLevel = .warning

        let engineIO = EngineIOServer(path: "/engine.io", settings: settings, application: EchoApplication())
        let socketIO = EngineIOServer(path: "/socket.io", settings: settings, socketIO: SocketIOSettings(), application: SuiteApplication())
        let router = Router()
        engineIO.registerPolling(on: router)
        socketIO.registerPolling(on: router)
        let limits = WebSocketLimits(maxMessageSize: settings.maxPayload, maxQueuedBytes: settings.pollingQueueBytes, compression: .init(isEnabled: false, thresholdBytes: 0))
        let server = WebSocketServerChannel.builder(limits: limits) { head in
            engineIO.webSocketRoute(head) ?? socketIO.webSocketRoute(head)
        }
        let address = host
        var app = Application(
            router: router,
            server: server,
            configuration: .init(address: .hostname(host, port: port), serverName: "roomcast-conformance"),
            onServerRunning: { channel in
                let line = "conformance server ready on http://\(address):\(channel.localAddress?.port ?? 0)/\n"
                FileHandle.standardOutput.write(Data(line.utf8))
            },
            logger: logger
        )
        app.addServices(engineIO, socketIO)
        try await app.runService()
    }

    private static func fail(_ message: String) -> Never {
        FileHandle.standardError.write(Data("roomcast-conformance: \(message)\n".utf8))
        exit(64)
    }
}

/// The suite's Engine.IO server: every message, text or binary, goes back to its sender.
struct EchoApplication: EngineIOApplication {
    func makeSessionID() -> String {
        RandomID.make()
    }

    func handler(for session: SocketSession, opening: EngineIOOpening) -> any EngineIOSessionHandler {
        // No Socket.IO above it: no CONNECT to wait for.
        session.hasConnected.store(true, ordering: .relaxed)
        return EchoHandler(session: session)
    }
}

final class EchoHandler: EngineIOSessionHandler {
    private let session: SocketSession

    init(session: SocketSession) {
        self.session = session
    }

    func received(_ inbound: EngineIOInbound) {
        switch inbound {
        case .message(let text): session.send(EngineIOPacket.message(text).encoded())
        case .binary(let data): session.send(OutboundFrame(binary: data))
        case .undecodable: session.close(.protocolError, reason: "invalid packet")
        case .ended: break
        }
    }
}

/// The suite's Socket.IO server: namespaces `/` and `/custom`; on connect, `auth` with the
/// handshake's auth payload; `message` echoed as `message-back`, `message-with-ack` answered with
/// its arguments, binary attachments included.
struct SuiteApplication: SocketIOApplication {
    func makeSessionID() -> String {
        RandomID.make()
    }

    func serves(namespace: String) -> Bool {
        namespace == "/" || namespace == "/custom"
    }

    func handler(for session: SocketSession, opening: EngineIOOpening) -> any SocketIOHandler {
        SuiteHandler(session: session)
    }
}

final class SuiteHandler: SocketIOHandler {
    private let session: SocketSession

    init(session: SocketSession) {
        self.session = session
    }

    func connect(namespace: String, auth: ByteBuffer?) async -> Bool {
        session.send(SocketIOFrame.connect(sid: RandomID.make(), namespace: namespace))
        session.send(SocketIOFrame.event(name: "auth", arguments: [auth ?? ByteBuffer(string: "{}")], namespace: namespace))
        return true
    }

    func event(_ event: SocketIOEvent) async {
        switch event.name {
        case "message":
            let packet = SocketIOFrame.event(
                name: "message-back", arguments: event.arguments, namespace: event.namespace, attachments: event.attachments?.count
            )
            session.send(packet, attachments: event.attachments ?? [])
        case "message-with-ack":
            guard let id = event.ackId else { return }
            let packet = SocketIOFrame.ack(id: id, arguments: event.arguments, namespace: event.namespace, attachments: event.attachments?.count)
            session.send(packet, attachments: event.attachments ?? [])
        default:
            break
        }
    }

    func disconnect(namespace: String) async {}

    func closed() async {}
}
