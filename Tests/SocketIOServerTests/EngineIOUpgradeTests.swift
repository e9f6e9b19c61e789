import NIOCore
import NIOEmbedded
import NIOWebSocket
import SocketIO
@testable import SocketIOServer
import Synchronization
import Testing
import WebSocketServer

/// A session that starts with long-polling and moves to a WebSocket (Engine.IO's probe and
/// upgrade), and the heartbeat that keeps it: on one embedded loop, an embedded channel for the
/// WebSocket, no socket and no Redis.
@Suite("Engine.IO sessions on embedded channels: upgrade and heartbeat")
struct EngineIOUpgradeTests {
    /// A polling session of a Socket.IO server, its engine and everything on `loop` (used by
    /// the test and the loop it drives, one at a time).
    final class Fixture: @unchecked Sendable {
        let loop: any EventLoop
        let transport: EngineIOConnection
        let engine: EngineIOSession
        let events = EventLog()

        /// Made on `loop`.
        init(loop: any EventLoop, settings: EngineIOSettings = EngineIOSettings()) {
            self.loop = loop
            let server = SocketServer(configuration: .init(engineIO: settings))
            let events = self.events
            let namespace = server.namespace("/")
            namespace.onAnyEvent { socket, _, event in
                events.append(event.name)
                socket.emit("echo", arguments: event.arguments)
                return .handled
            }
            namespace.onDisconnect { _, _, reason in events.append("disconnect: \(reason)") }
            transport = EngineIOConnection(id: "s", pollingOn: loop, maxQueuedBytes: 1 << 20)
            let handler = SocketIOConnection(transport: transport, server: server, handshake: nil)
            engine = EngineIOSession(
                session: transport, handler: handler, settings: settings, wheel: LoopTimerWheel(loop: loop, granularity: settings.timerGranularity),
                loop: loop, upgrades: ["websocket"]
            )
        }

        /// What a poll takes now, the packets apart; nil when the poll waits (it is left waiting).
        /// On an embedded loop.
        func poll() throws -> [String]? {
            let result = Mutex<Result<ByteBuffer, any Error>?>(nil)
            transport.poll().whenComplete { outcome in result.withLock { $0 = outcome } }
            (loop as! EmbeddedEventLoop).run()
            return try result.withLock { $0 }.map { String(buffer: try $0.get()).split(separator: "\u{1E}").map(String.init) }
        }

        /// A packet from the client over polling, on an embedded loop.
        func post(_ packet: String) throws {
            engine.received(try EngineIOPacket(decoding: ByteBuffer(string: packet)))
            (loop as! EmbeddedEventLoop).run()
        }
    }

        /// What the fixture's handlers were told, in order.
    final class EventLog: Sendable {
        private let list = Mutex<[String]>([])

        func append(_ event: String) {
            list.withLock { $0.append(event) }
        }

        var all: [String] { list.withLock { $0 } }
    }

    /// A WebSocket on `loop` that probes the fixture's session.
    struct Probe {
        let channel: EmbeddedChannel

        init(_ fixture: Fixture) throws {
            channel = EmbeddedChannel(loop: fixture.loop as! EmbeddedEventLoop)
            try channel.connect(to: .init(ipAddress: "127.0.0.1", port: 1)).wait()
            let endpoint = EngineIOUpgradeEndpoint(session: fixture.transport, engine: NIOLoopBound(fixture.engine, eventLoop: fixture.loop))
            try channel.pipeline.syncOperations.addHandler(WebSocketConnectionHandler(endpoint: endpoint, maxMessageSize: 1 << 20, maxQueuedBytes: 1 << 20))
        }

        /// A text message from the client.
        func send(_ text: String) throws {
            var frame = ByteBuffer()
            let payload = Array(text.utf8)
            precondition(payload.count < 126)
            let key: [UInt8] = [1, 2, 3, 4]
            frame.writeBytes([0x81, 0x80 | UInt8(payload.count)] + key)
            frame.writeBytes(payload.enumerated().map { $0.element ^ key[$0.offset % 4] })
            try channel.writeInbound(frame)
            channel.embeddedEventLoop.run()
        }

        /// The text messages written to the client so far.
        func received() throws -> [String] {
            var texts: [String] = []
            while var bytes = try channel.readOutbound(as: ByteBuffer.self) {
                while bytes.readableBytes >= 2 {
                    let opcode = bytes.readInteger(as: UInt8.self)! & 0x0F
                    var length = Int(bytes.readInteger(as: UInt8.self)! & 0x7F)
                    if length == 126 { length = Int(bytes.readInteger(as: UInt16.self)!) }
                    let payload = bytes.readSlice(length: length)!
                    if opcode == 1 { texts.append(String(buffer: payload)) }
                }
            }
            return texts
        }
    }

    @Test("probe, upgrade: the waiting poll ends with a noop, what was queued goes over the WebSocket, polls end, packets flow")
    func upgrade() throws {
        let loop = EmbeddedEventLoop()
        let fixture = Fixture(loop: loop)
        let open = try #require(try fixture.poll())
        #expect(open.count == 1 && open[0].hasPrefix(#"0{"sid":"s","upgrades":["websocket"]"#), "\(open)")
        try fixture.post("40")
        let connected = try #require(try fixture.poll())
        #expect(connected.count == 1 && connected[0].hasPrefix("40{"), "\(connected)")
        // A poll waits; the probe answers it with a noop, as socket.io-client needs to send `5`.
        let pending = Mutex<String?>(nil)
        fixture.transport.poll().whenSuccess { body in pending.withLock { $0 = String(buffer: body) } }
        let probe = try Probe(fixture)
        try probe.send("2probe")
        #expect(try probe.received() == ["3probe"])
        #expect(pending.withLock { $0 } == "6")
        // Polls end at once while the upgrade is under way; what is sent meanwhile waits for it.
        #expect(try fixture.poll() == ["6"])
        try fixture.post(#"42["before"]"#)
        try probe.send("5")
        loop.run()
        #expect(try probe.received() == [#"42["echo"]"#])
        #expect(throws: EngineIOConnection.PollError.upgraded) { try fixture.poll() }
        // Over the WebSocket now, both ways.
        try probe.send(#"42["after"]"#)
        loop.run()
        #expect(try probe.received() == [#"42["echo"]"#])
        #expect(fixture.events.all == ["before", "after"])
        // Its end is the session's.
        try probe.channel.close().wait()
        loop.run()
    }

    @Test("a probe that closes before the upgrade leaves the session polling")
    func abandonedProbe() throws {
        let loop = EmbeddedEventLoop()
        let fixture = Fixture(loop: loop)
        _ = try fixture.poll()
        try fixture.post("40")
        _ = try fixture.poll()
        let probe = try Probe(fixture)
        try probe.send("2probe")
        #expect(try probe.received() == ["3probe"])
        try probe.channel.close().wait()
        loop.run()
        try fixture.post(#"42["still-polling"]"#)
        #expect(try fixture.poll() == [#"42["echo"]"#])
    }

    @Test("the heartbeat pings a polling session, a pong keeps it, silence ends it as a ping timeout")
    func heartbeat() async throws {
        let settings = EngineIOSettings(pingInterval: .milliseconds(20), pingTimeout: .milliseconds(40))
        let loop = NIOAsyncTestingEventLoop()
        let fixture = try await loop.submit { Fixture(loop: loop, settings: settings) }.get()
        /// A packet from the client over polling, handled on the loop.
        func post(_ packet: String) async throws {
            let decoded = try EngineIOPacket(decoding: ByteBuffer(string: packet))
            try await loop.submit { fixture.engine.received(decoded) }.get()
        }
        // The loop's timer wheel turns as its clock is moved; the deadlines are real time.
        func turn(until condition: () -> Bool) async throws -> Bool {
            for _ in 0..<20_000 {
                await loop.advanceTime(by: settings.timerGranularity)
                if condition() { return true }
                try await Task.sleep(for: .milliseconds(1))
            }
            return false
        }
        /// The next poll's packets, once it is answered.
        func nextPoll() async throws -> [String]? {
            let result = Mutex<String?>(nil)
            fixture.transport.poll().whenSuccess { body in result.withLock { $0 = String(buffer: body) } }
            _ = try await turn { result.withLock { $0 } != nil }
            return result.withLock { $0 }.map { $0.split(separator: "\u{1E}").map(String.init) }
        }
        _ = try await nextPoll()
        try await post("40")
        _ = try await nextPoll()
        #expect(try await nextPoll() == ["2"])
        try await post("3")
        #expect(try await nextPoll() == ["2"], "a pong is answered by the next ping")
        // No pong now: the session closes (its close packet goes to the poll) and its socket
        // leaves as a ping timeout.
        #expect(try await nextPoll() == ["1"])
        let ended = try await turn { fixture.events.all.contains("disconnect: ping timeout") }
        #expect(ended, "\(fixture.events.all)")
    }
}
