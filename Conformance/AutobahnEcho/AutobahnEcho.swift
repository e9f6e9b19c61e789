import Foundation
import Hummingbird
import Logging
import NIOCore
import NIOWebSocket
import WebSocketServer

/// An echo served by Roomcast's WebSocket stack (``WebSocketServerChannel``: the gateway's
/// upgrade, limits, message reading and frame writing), for Autobahn|Testsuite's fuzzing client.
///
/// The gateway's endpoint speaks Engine.IO and cannot echo; this separate executable is never part
/// of `roomcast`. `scripts/autobahn.sh` runs it.
///
///     roomcast-autobahn-echo [--host 127.0.0.1] [--port 9001] [--max-payload BYTES]
///                            [--compression on|off] [--compression-threshold BYTES]
///
/// permessage-deflate is offered unless `--compression off`, and with a threshold of 0 unless
/// told otherwise: every echoed message is compressed, so 12.* and 13.* exercise it all.
///
/// `--port 0` takes any free port; the ready line says which:
/// `autobahn echo ready on ws://127.0.0.1:PORT/`.
@main
struct AutobahnEcho {
    static func main() async throws {
        var host = "127.0.0.1"
        var port = 9001
        // The gateway's own default (`engineio.max_payload`) unless told otherwise.
        var maxPayload = 1_000_000
        var compression = WebSocketCompression(isEnabled: true, thresholdBytes: 0)
        var arguments = CommandLine.arguments.dropFirst()
        while let flag = arguments.popFirst() {
            guard let value = arguments.popFirst() else { fail("\(flag) needs a value") }
            switch flag {
            case "--host": host = value
            case "--port": port = number(value, flag)
            case "--max-payload": maxPayload = number(value, flag)
            case "--compression":
                guard value == "on" || value == "off" else { fail("--compression: '\(value)' is not on or off") }
                compression.isEnabled = value == "on"
            case "--compression-threshold": compression.thresholdBytes = number(value, flag)
            default:
                fail(
                    "unknown argument '\(flag)'; usage: roomcast-autobahn-echo [--host H] [--port N] [--max-payload BYTES] [--compression on|off] [--compression-threshold BYTES]"
                )
            }
        }
        var logger = Logger(label: "autobahn-echo")
        logger.logLevel = .warning

        let (address, limit) = (host, maxPayload)
        let limits = WebSocketLimits(maxMessageSize: limit, maxQueuedBytes: 1 << 30, compression: compression)
        let server = WebSocketServerChannel.builder(limits: limits) { _ in
            { _ in EchoEndpoint() }
        }
        let app = Application(
            router: Router(),
            server: server,
            configuration: .init(address: .hostname(host, port: port), serverName: "roomcast-autobahn-echo"),
            onServerRunning: { channel in
                let line = "autobahn echo ready on ws://\(address):\(channel.localAddress?.port ?? 0)/ (max payload \(limit) bytes)\n"
                FileHandle.standardOutput.write(Data(line.utf8))
            },
            logger: logger
        )
        try await app.runService()
    }

    private static func number(_ value: String, _ flag: String) -> Int {
        guard let number = Int(value), number >= 0 else { fail("\(flag): '\(value)' is not a whole number") }
        return number
    }

    private static func fail(_ message: String) -> Never {
        FileHandle.standardError.write(Data("roomcast-autobahn-echo: \(message)\n".utf8))
        exit(64)
    }
}

/// Sends every message back as it came.
final class EchoEndpoint: WebSocketEndpoint {
    private var connection: WebSocketConnectionHandler?

    func opened(_ connection: WebSocketConnectionHandler) {
        self.connection = connection
    }

    func received(_ message: WebSocketDataMessage) {
        switch message {
        case .text(let text): connection?.write(WebSocketOutboundMessage(.text, text))
        case .binary(let data): connection?.write(WebSocketOutboundMessage(.binary, data))
        }
        connection?.flush()
    }

    func shouldQuiesce() {
        connection?.close(WebSocketCloseReason(.goingAway, "server shutting down"))
    }

    func closed() {
        connection = nil
    }
}
