import Foundation
import Hummingbird
import Logging
import NIOCore
import NIOWebSocket
import SocketIO
import SocketIOServer
import WebSocketServer

/// The test server of the official Engine.IO v4 and Socket.IO v5 protocol suites
/// (socketio/socket.io `docs/engine.io-protocol/v4-test-suite`, `docs/socket.io-protocol/v5-test-suite`),
/// on the `SocketIOServer` library's public API: an Engine.IO echo at `/engine.io/`, and at
/// `/socket.io/` the Socket.IO server the v5 suite's document describes, with the suites'
/// timings. Never part of `roomcast`; `scripts/conformance.sh` runs it and the port of the
/// suites against it.
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

        // No Socket.IO above the echo: no CONNECT to wait for.
        var echoSettings = settings
        echoSettings.connectTimeout = nil
        let engineIO = EngineIOServer(path: "/engine.io", settings: echoSettings, application: EchoApplication())
        let socketIO = SocketServer(configuration: .init(path: "/socket.io", engineIO: settings))
        for name in ["/", "/custom"] { serveSuiteNamespace(socketIO.namespace(name)) }

        let router = Router()
        engineIO.registerPolling(on: router)
        socketIO.engine.registerPolling(on: router)
        let limits = WebSocketLimits(maxMessageSize: settings.maxPayload, maxQueuedBytes: settings.pollingQueueBytes)
        let server = WebSocketServerChannel.builder(limits: limits) { head in
            engineIO.webSocketRoute(head) ?? socketIO.engine.webSocketRoute(head)
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

    /// The suite's Socket.IO namespace: on connect, `auth` with the handshake's auth payload;
    /// `message` echoed as `message-back`, `message-with-ack` answered with its arguments, binary
    /// attachments included. Everything is answered as it arrives: no task.
    static func serveSuiteNamespace(_ namespace: SocketIONamespace<Void>) {
        namespace.onConnect { socket, request in
            // Sent after the CONNECT answer, as a socket sends nothing before it.
            socket.emit("auth", arguments: SocketIOArguments(json: [request.auth ?? ByteBuffer(string: "{}")]))
            return .accept
        }
        namespace.onAnyEvent { socket, _, event in
            switch event.name {
            case "message":
                socket.emit("message-back", arguments: event.arguments)
            case "message-with-ack":
                if let id = event.ackID { socket.ack(id, with: event.arguments) }
            default:
                break
            }
            return .handled
        }
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

    func handler(for session: EngineIOConnection, opening: EngineIOOpening) -> any EngineIOSessionHandler {
        EchoHandler(session: session)
    }
}

final class EchoHandler: EngineIOSessionHandler {
    private let session: EngineIOConnection

    init(session: EngineIOConnection) {
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
