import Foundation
import NIOCore
import NIOEmbedded
import SocketIO
@testable import SocketIOServer
import Synchronization
import Testing

/// The library's Socket.IO layer on a polling session (an embedded loop, no socket): what
/// reaches the handlers, in which order, and what closes the connection.
@Suite("SocketIOConnection: decoding, dispatch, bounds")
struct SocketIOConnectionTests {
    /// What the handlers were told, in order, and a gate an event handler may wait at.
    final class Recorder: Sendable {
        let calls: AsyncStream<String>
        private let continuation: AsyncStream<String>.Continuation
        private let gates = Mutex<[String: CheckedContinuation<Void, Never>]>([:])
        private let open = Mutex<Set<String>>([])

        init() {
            (calls, continuation) = AsyncStream.makeStream()
        }

        func record(_ call: String) {
            continuation.yield(call)
        }

        /// Waits until ``release(_:)`` opens gate `name` (at once if it is open).
        func wait(at name: String) async {
            await withCheckedContinuation { (waiting: CheckedContinuation<Void, Never>) in
                let isOpen = open.withLock { $0.contains(name) }
                if isOpen { return waiting.resume() }
                gates.withLock { $0[name] = waiting }
            }
        }

        func release(_ name: String) {
            open.withLock { _ = $0.insert(name) }
            gates.withLock { $0.removeValue(forKey: name) }?.resume()
        }
    }

    struct Say: Codable, Sendable {
        var room: String
        var text: String?
    }

    /// A server whose `/` namespace records its events; `hold` events wait at their room's gate.
    static func server(order: SocketIOEventOrder = .arrival, inboundQueueBytes: Int = 1 << 20, recorder: Recorder) -> SocketServer {
        let server = SocketServer(configuration: .init(inboundQueueBytes: inboundQueueBytes, maxAttachments: 64))
        let namespace = server.namespace("/")
        namespace.order(order)
        namespace.onConnect { _, _ in
            recorder.record("connect /")
            return .accept
        }
        namespace.on("say", Say.self, orderedBy: { $0.room }) { _, _, say in
            recorder.record("start \(say.room) \(say.text ?? "")")
            if say.text == "hold" { await recorder.wait(at: say.room) }
            recorder.record("end \(say.room) \(say.text ?? "")")
            return SocketIOArguments.none
        }
        namespace.onAnyEvent { _, _, event in
            let attachments = event.arguments.attachments.map { Array($0.readableBytesView).description }.joined(separator: ",")
            recorder.record("event \(event.name)" + (attachments.isEmpty ? "" : " " + attachments))
            return .handled
        }
        namespace.onDisconnect { _, _, reason in recorder.record("disconnect \(reason)") }
        server.onUndecodable { _ in recorder.record("undecodable") }
        return server
    }

    static func connection(_ server: SocketServer) -> (SocketIOConnection, EngineIOConnection, NIOAsyncTestingEventLoop) {
        let loop = NIOAsyncTestingEventLoop()
        let transport = EngineIOConnection(id: "s", pollingOn: loop, maxQueuedBytes: 1 << 20)
        return (SocketIOConnection(transport: transport, server: server, handshake: nil), transport, loop)
    }

    /// An Engine.IO message as the client writes it (`4` + Socket.IO packet), as the session hands it on.
    static func text(_ engineIOPacket: String) -> EngineIOInbound {
        precondition(engineIOPacket.hasPrefix("4"))
        return .message(ByteBuffer(string: String(engineIOPacket.dropFirst())))
    }

    /// What the next poll takes now; nil when nothing waits.
    static func polled(_ transport: EngineIOConnection, _ loop: NIOAsyncTestingEventLoop) async throws -> String? {
        let result = Mutex<Result<ByteBuffer, any Error>?>(nil)
        transport.poll().whenComplete { outcome in result.withLock { $0 = outcome } }
        await loop.run()
        if let outcome = result.withLock({ $0 }) { return String(buffer: try outcome.get()) }
        // Nothing to take: give the waiting poll an answer so the next call can poll again. A
        // handler's task may have answered it in the meantime: then its frames are the answer,
        // and the noop waits for the next poll.
        transport.send(EngineIOPacket.noop.encoded())
        await loop.run()
        guard let outcome = result.withLock({ $0 }) else { return nil }
        let body = String(buffer: try outcome.get())
        return body == "6" ? nil : body
    }

    /// Polls until `condition` holds for what came (the handlers run in tasks).
    static func poll(_ transport: EngineIOConnection, _ loop: NIOAsyncTestingEventLoop, until condition: (String) -> Bool) async throws -> String {
        var taken = ""
        for _ in 0..<10_000 {
            if let body = try await polled(transport, loop), body != "6" { taken += (taken.isEmpty ? "" : "\u{1E}") + body }
            if condition(taken) { return taken }
            try await Task.sleep(for: .milliseconds(1))
        }
        Issue.record("never came; got \(taken)")
        return taken
    }

    @Test("an immediate connect handler is answered as the packet arrives: no task, the CONNECT answer ready to poll")
    func immediateConnect() async throws {
        let recorder = Recorder()
        let (connection, transport, loop) = Self.connection(Self.server(recorder: recorder))
        connection.received(Self.text("40"))
        let answer = try #require(try await Self.polled(transport, loop))
        #expect(answer.hasPrefix(#"40{"sid":""#) && answer.count == #"40{"sid":""}"#.count + 20, "\(answer)")
        let hasConnected = transport.hasConnected.load(ordering: .relaxed)
        #expect(hasConnected)
    }

    @Test("what a connect handler sends goes after the CONNECT answer; a refusal sends its message and data, and nothing else")
    func connectOrderAndRefusal() async throws {
        let server = SocketServer()
        let namespace = server.namespace("/", context: String.self)
        namespace.onConnect { socket, request in
            socket.emit("hello", arguments: SocketIOArguments(json: [ByteBuffer(string: "1")]))
            guard let name = request.auth(as: [String: String].self)?["name"] else { return .refuse("a name is required", data: ByteBuffer(string: #"{"code":"x"}"#)) }
            return .accept(name)
        }
        let (connection, transport, loop) = Self.connection(server)
        connection.received(Self.text("40"))
        #expect(try await Self.polled(transport, loop) == #"44{"message":"a name is required","data":{"code":"x"}}"#)
        connection.received(Self.text(#"40{"name":"ann"}"#))
        let answer = try #require(try await Self.polled(transport, loop))
        #expect(answer.hasPrefix("40{") && answer.hasSuffix("\u{1E}42[\"hello\",1]"), "\(answer)")
    }

    @Test("a binary event reaches its handler with its attachments, in order")
    func binaryEvent() async throws {
        let recorder = Recorder()
        let (connection, _, _) = Self.connection(Self.server(recorder: recorder))
        var calls = recorder.calls.makeAsyncIterator()
        connection.received(Self.text("40"))
        #expect(await calls.next() == "connect /")
        connection.received(Self.text(#"452-["up",{"_placeholder":true,"num":0},{"_placeholder":true,"num":1}]"#))
        connection.received(.binary(ByteBuffer(bytes: [1, 2])))
        connection.received(.binary(ByteBuffer(bytes: [3])))
        #expect(await calls.next() == "event up [1, 2],[3]")
    }

    @Test(
        "what cannot be decoded closes the connection",
        arguments: [
            [#"4abc"#],
            [#"42{}"#],
            [#"42abc["a"]"#],
            [#"451-["a",{"_placeholder":true,"num":0}]"#, #"42["b"]"#],  // text where an attachment was due
            [#"4565-["a"]"#],  // more attachments than the bound
        ]
    )
    func undecodableCloses(_ packets: [String]) async throws {
        let recorder = Recorder()
        let (connection, transport, loop) = Self.connection(Self.server(recorder: recorder))
        var calls = recorder.calls.makeAsyncIterator()
        connection.received(Self.text("40"))
        #expect(await calls.next() == "connect /")
        _ = try await Self.polled(transport, loop)
        for packet in packets { connection.received(Self.text(packet)) }
        #expect(await calls.next() == "undecodable")
        #expect(try await Self.polled(transport, loop) == "1")
    }

    @Test("binary data that no binary packet announced closes the connection")
    func strayBinary() async throws {
        let recorder = Recorder()
        let (connection, transport, loop) = Self.connection(Self.server(recorder: recorder))
        var calls = recorder.calls.makeAsyncIterator()
        connection.received(.binary(ByteBuffer(bytes: [1])))
        #expect(await calls.next() == "undecodable")
        #expect(try await Self.polled(transport, loop) == "1")
    }

    @Test("an unknown namespace is refused as the reference refuses it; events for it are not handled")
    func unknownNamespace() async throws {
        let recorder = Recorder()
        let (connection, transport, loop) = Self.connection(Self.server(recorder: recorder))
        var calls = recorder.calls.makeAsyncIterator()
        connection.received(Self.text("40/random,"))
        connection.received(Self.text(#"42/random,["a"]"#))
        connection.received(Self.text("40"))
        #expect(await calls.next() == "connect /")
        let body = try #require(try await Self.polled(transport, loop))
        #expect(body.hasPrefix(#"44/random,{"message":"Invalid namespace"}"# + "\u{1E}40{"), "\(body)")
    }

    @Test("packets waiting past the inbound byte bound close the connection (1008)")
    func inboundBound() async throws {
        let recorder = Recorder()
        let (connection, transport, loop) = Self.connection(Self.server(inboundQueueBytes: 512, recorder: recorder))
        var calls = recorder.calls.makeAsyncIterator()
        connection.received(Self.text("40"))
        #expect(await calls.next() == "connect /")
        _ = try await Self.polled(transport, loop)
        connection.received(Self.text(#"42["say",{"room":"a","text":"hold"}]"#))
        #expect(await calls.next() == "start a hold")
        // The handler holds the lane: what follows waits, 512 bytes at most with the one running
        // (each packet counts its bytes and 64 for holding it).
        for _ in 0..<8 { connection.received(Self.text(#"42["say",{"room":"a","text":"0123456789"}]"#)) }
        #expect(try await Self.polled(transport, loop) == "1")
        recorder.release("a")
    }

    @Test("in arrival order, an event waits for the one before it, whatever its room")
    func arrivalOrder() async throws {
        let recorder = Recorder()
        let (connection, _, _) = Self.connection(Self.server(order: .arrival, recorder: recorder))
        var calls = recorder.calls.makeAsyncIterator()
        connection.received(Self.text("40"))
        #expect(await calls.next() == "connect /")
        connection.received(Self.text(#"42["say",{"room":"a","text":"hold"}]"#))
        connection.received(Self.text(#"42["say",{"room":"b","text":"x"}]"#))
        #expect(await calls.next() == "start a hold")
        recorder.release("a")
        #expect(await calls.next() == "end a hold")
        #expect(await calls.next() == "start b x")
    }

    @Test("ordered per key, an event of another room goes on while one room's waits; the room's own events stay in order")
    func perKeyOrder() async throws {
        let recorder = Recorder()
        let (connection, transport, loop) = Self.connection(Self.server(order: .perKey, recorder: recorder))
        var calls = recorder.calls.makeAsyncIterator()
        connection.received(Self.text("40"))
        #expect(await calls.next() == "connect /")
        _ = try await Self.polled(transport, loop)
        connection.received(Self.text(#"421["say",{"room":"a","text":"hold"}]"#))
        connection.received(Self.text(#"422["say",{"room":"a","text":"after"}]"#))
        connection.received(Self.text(#"423["say",{"room":"b","text":"x"}]"#))
        #expect(await calls.next() == "start a hold")
        // b's ack comes while a's first event still waits, and a's second has not started.
        let acked = try await Self.poll(transport, loop) { $0.contains("433[]") }
        #expect(!acked.contains("431[]") && !acked.contains("432[]"), "\(acked)")
        #expect(await calls.next() == "start b x")
        #expect(await calls.next() == "end b x")
        recorder.release("a")
        #expect(await calls.next() == "end a hold")
        #expect(await calls.next() == "start a after")
        #expect(await calls.next() == "end a after")
        let rest = try await Self.poll(transport, loop) { $0.contains("432[]") }
        #expect(rest == "431[]\u{1E}432[]", "\(rest)")
    }

    @Test("a DISCONNECT waits for the events before it, and the events after it are not handled")
    func disconnectIsABarrier() async throws {
        let recorder = Recorder()
        let (connection, _, _) = Self.connection(Self.server(order: .perKey, recorder: recorder))
        var calls = recorder.calls.makeAsyncIterator()
        connection.received(Self.text("40"))
        #expect(await calls.next() == "connect /")
        connection.received(Self.text(#"42["say",{"room":"a","text":"hold"}]"#))
        connection.received(Self.text("41"))
        connection.received(Self.text(#"42["say",{"room":"b","text":"late"}]"#))
        #expect(await calls.next() == "start a hold")
        recorder.release("a")
        #expect(await calls.next() == "end a hold")
        #expect(await calls.next() == "disconnect client namespace disconnect")
        connection.received(.ended(.transportClosed))
        recorder.record("done")
        #expect(await calls.next() == "done")
    }

    @Test("a call gets the client's ack; one with no ack times out; a disconnect fails the ones waiting")
    func serverToClientCall() async throws {
        let server = SocketServer()
        let sockets = Mutex<[SocketIOSocket]>([])
        server.namespace("/").onConnect { socket, _ in
            sockets.withLock { $0.append(socket) }
            return .accept
        }
        let (connection, transport, loop) = Self.connection(server)
        connection.received(Self.text("40"))
        _ = try await Self.polled(transport, loop)
        let socket = try #require(sockets.withLock { $0.first })
        async let answer = socket.call("ping", arguments: SocketIOArguments(json: [ByteBuffer(string: "{}")]), timeout: .seconds(600))
        let sent = try await Self.poll(transport, loop) { $0.contains("ping") }
        #expect(sent == #"420["ping",{}]"#)
        connection.received(Self.text(#"430[{"pong":true}]"#))
        #expect(try await answer.json.map { String(buffer: $0) } == [#"{"pong":true}"#])

        let silent = Task { try await socket.call("silent", timeout: .milliseconds(5)) }
        _ = try await Self.poll(transport, loop) { $0.contains("silent") }
        // The loop's clock is the test's: the timeout passes when it is moved.
        await loop.advanceTime(by: .milliseconds(5))
        await #expect(throws: SocketIOCallError.timedOut) { try await silent.value }
        let orphan = Task { try await socket.call("never", timeout: .seconds(600)) }
        _ = try await Self.poll(transport, loop) { $0.contains("never") }
        connection.received(.ended(.transportClosed))
        await #expect(throws: SocketIOCallError.disconnected) { try await orphan.value }
    }
}
