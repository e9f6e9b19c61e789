import NIOCore
import NIOEmbedded
import SocketIO
@testable import SocketIOServer
import Testing

/// A session served by long-polling, driven on an embedded loop: what each poll takes.
@Suite("EngineIOConnection over long-polling")
struct EngineIOConnectionPollingTests {
    private func session(limit: Int = 1 << 20) -> (EngineIOConnection, EmbeddedEventLoop) {
        let loop = EmbeddedEventLoop()
        return (EngineIOConnection(id: "s", pollingOn: loop, maxQueuedBytes: limit), loop)
    }

    private func body(_ future: EventLoopFuture<ByteBuffer>, _ loop: EmbeddedEventLoop) throws -> String {
        loop.run()
        return String(buffer: try future.wait())
    }

    @Test("text and binary frames wait for one poll, joined by 0x1E, binary as b + base64")
    func joinsTextAndBinary() throws {
        let (session, loop) = session()
        session.send(EngineIOPacket.message(ByteBuffer(string: "hello")).encoded())
        session.send(OutboundFrame(binary: ByteBuffer(bytes: [1, 2, 3, 4])))
        #expect(try body(session.poll(), loop) == "4hello\u{1E}bAQIDBA==")
    }

    @Test("a waiting poll is answered by the next frame")
    func waitingPollAnswered() throws {
        let (session, loop) = session()
        let poll = session.poll()
        session.send(OutboundFrame(binary: ByteBuffer(bytes: [0xFF])))
        #expect(try body(poll, loop) == "b/w==")
    }

    @Test("a second poll while one waits is refused as overlapping")
    func overlappingPoll() throws {
        let (session, loop) = session()
        let first = session.poll()
        #expect(throws: EngineIOConnection.PollError.overlapping) { try self.body(session.poll(), loop) }
        session.connectionClosed()
        #expect(throws: EngineIOConnection.PollError.closed) { try self.body(first, loop) }
    }

    @Test("the client's close answers the waiting poll with a noop, and later polls fail")
    func clientCloseAnswersWithNoop() throws {
        let (session, loop) = session()
        let poll = session.poll()
        session.clientClosed()
        #expect(try body(poll, loop) == "6")
        #expect(throws: EngineIOConnection.PollError.closed) { try self.body(session.poll(), loop) }
    }

    @Test("past the queue's byte bound what waits is dropped and the close packet waits instead")
    func queueBound() throws {
        let (session, loop) = session(limit: 8)
        session.send(EngineIOPacket.message(ByteBuffer(string: "1234")).encoded())
        session.send(EngineIOPacket.message(ByteBuffer(string: "5678")).encoded())
        #expect(try body(session.poll(), loop) == "1")
    }
}
