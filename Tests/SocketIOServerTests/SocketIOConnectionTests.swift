import HTTPTypes
import NIOCore
import NIOEmbedded
import SocketIO
@testable import SocketIOServer
import Synchronization
import Testing

/// The library's Socket.IO layer on a polling session (an embedded loop): what reaches the
/// handler, and what closes the connection.
@Suite("SocketIOConnection: decoding, attachments, bounds")
struct SocketIOConnectionTests {
    /// Records what the handler is told, in order; `event` may be held until released.
    final class RecordingHandler: SocketIOHandler {
        let calls: AsyncStream<String>
        private let continuation: AsyncStream<String>.Continuation
        private let gate = Mutex<CheckedContinuation<Void, Never>?>(nil)
        private let holdEvents: Bool

        init(holdEvents: Bool = false) {
            (calls, continuation) = AsyncStream.makeStream()
            self.holdEvents = holdEvents
        }

        func connect(namespace: String, auth: ByteBuffer?) async -> Bool {
            continuation.yield("connect \(namespace)")
            return true
        }

        func event(_ event: SocketIOEvent) async {
            let attachments = event.attachments.map { " " + $0.map { Array($0.readableBytesView).description }.joined(separator: ",") } ?? ""
            continuation.yield("event \(event.name)\(attachments)")
            if holdEvents {
                await withCheckedContinuation { (held: CheckedContinuation<Void, Never>) in gate.withLock { $0 = held } }
            }
        }

        /// Lets a held event finish.
        func release() {
            gate.withLock { $0.take() }?.resume()
        }

        func disconnect(namespace: String) async { continuation.yield("disconnect \(namespace)") }
        func closed() async { continuation.yield("closed") }
        func undecodable(_ reason: String) async { continuation.yield("undecodable") }
    }

    struct Application: SocketIOApplication {
        let handler: RecordingHandler
        func makeSessionID() -> String { "s" }
        func serves(namespace: String) -> Bool { namespace == "/" }
        func handler(for session: SocketSession, opening: EngineIOOpening) -> any SocketIOHandler { handler }
    }

    private func connection(_ handler: RecordingHandler, settings: SocketIOSettings = SocketIOSettings()) -> (SocketIOConnection, SocketSession, EmbeddedEventLoop) {
        let loop = EmbeddedEventLoop()
        let session = SocketSession(id: "s", pollingOn: loop, maxQueuedBytes: 1 << 20)
        let opening = EngineIOOpening(request: EngineIORequest(target: "/socket.io/?EIO=4&transport=polling"), headers: HTTPFields())
        let server = SocketIOOverEngineIO(settings: settings, application: Application(handler: handler))
        return (SocketIOConnection(session: session, opening: opening, server: server), session, loop)
    }

    /// An Engine.IO message as the client writes it (`4` + Socket.IO packet), as the session hands it on.
    private func text(_ engineIOPacket: String) -> EngineIOInbound {
        precondition(engineIOPacket.hasPrefix("4"))
        return .message(ByteBuffer(string: String(engineIOPacket.dropFirst())))
    }

    /// What the next poll takes, once the connection's task has run.
    private func polled(_ session: SocketSession, _ loop: EmbeddedEventLoop) throws -> String {
        let result = Mutex<Result<ByteBuffer, any Error>?>(nil)
        session.poll().whenComplete { outcome in result.withLock { $0 = outcome } }
        loop.run()
        // Never waits: a poll with nothing to take would wait for ever on this loop.
        let outcome = try #require(result.withLock { $0 }, "nothing to poll: the session is still open")
        return String(buffer: try outcome.get())
    }

    @Test("a binary event reaches the handler with its attachments, in order")
    func binaryEvent() async throws {
        let handler = RecordingHandler()
        let (connection, _, _) = connection(handler)
        var calls = handler.calls.makeAsyncIterator()
        connection.received(text("40"))
        #expect(await calls.next() == "connect /")
        connection.received(text(#"452-["up",{"_placeholder":true,"num":0},{"_placeholder":true,"num":1}]"#))
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
        let handler = RecordingHandler()
        let (connection, session, loop) = connection(handler, settings: SocketIOSettings(maxAttachments: 64))
        var calls = handler.calls.makeAsyncIterator()
        connection.received(text("40"))
        #expect(await calls.next() == "connect /")
        for packet in packets { connection.received(text(packet)) }
        #expect(await calls.next() == "undecodable")
        #expect(try polled(session, loop) == "1")
    }

    @Test("binary data that no binary packet announced closes the connection")
    func strayBinary() async throws {
        let handler = RecordingHandler()
        let (connection, session, loop) = connection(handler)
        var calls = handler.calls.makeAsyncIterator()
        connection.received(.binary(ByteBuffer(bytes: [1])))
        #expect(await calls.next() == "undecodable")
        #expect(try polled(session, loop) == "1")
    }

    @Test("an unknown namespace is refused as the reference refuses it; events for it are not handled")
    func unknownNamespace() async throws {
        let handler = RecordingHandler()
        let (connection, session, loop) = connection(handler)
        var calls = handler.calls.makeAsyncIterator()
        connection.received(text("40/random,"))
        connection.received(text(#"42/random,["a"]"#))
        connection.received(text("40"))
        #expect(await calls.next() == "connect /")
        #expect(try polled(session, loop) == #"44/random,{"message":"Invalid namespace"}"#)
    }

    @Test("packets waiting past the inbound byte bound close the connection (1008)")
    func inboundBound() async throws {
        let handler = RecordingHandler(holdEvents: true)
        let (connection, session, loop) = connection(handler, settings: SocketIOSettings(inboundQueueBytes: 256))
        var calls = handler.calls.makeAsyncIterator()
        connection.received(text("40"))
        #expect(await calls.next() == "connect /")
        connection.received(text(#"42["held"]"#))
        #expect(await calls.next() == "event held")
        // The handler holds the task: what follows waits in the inbox, 256 bytes at most (each
        // packet counts its bytes and 64 for holding it).
        for _ in 0..<4 { connection.received(text(#"42["waiting","0123456789"]"#)) }
        #expect(try polled(session, loop) == "1")
        handler.release()
    }
}
