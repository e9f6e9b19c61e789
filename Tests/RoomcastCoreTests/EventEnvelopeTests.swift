import NIOCore
import RoomcastCore
import Testing

@Suite("EventEnvelope")
struct EventEnvelopeTests {
    static let frameText = #"42["message:new",{"text":"a b c","offset":"1-0"}]"#

    @Test("'<offset> <frame>' gives the offset and the frame bytes")
    func withOffset() throws {
        let envelope = try #require(EventEnvelope(payload: ByteBuffer(string: "1-0 " + Self.frameText)))
        #expect(envelope.offset == "1-0")
        #expect(envelope.frame == ByteBuffer(string: Self.frameText))
    }

    @Test("'- <frame>' has no offset")
    func withoutOffset() throws {
        let envelope = try #require(EventEnvelope(payload: ByteBuffer(string: "- " + Self.frameText)))
        #expect(envelope.offset == nil)
        #expect(envelope.frame == ByteBuffer(string: Self.frameText))
    }

    @Test("a payload without a space is refused")
    func noSeparator() {
        #expect(EventEnvelope(payload: ByteBuffer(string: "1-0")) == nil)
        #expect(EventEnvelope(payload: ByteBuffer(string: #"42["x",{}]"#)) == nil)
        #expect(EventEnvelope(payload: ByteBuffer()) == nil)
    }

    @Test("a buffer that was partly read is split at its readable bytes")
    func partlyRead() throws {
        var buffer = ByteBuffer(string: "junk 99-9 ")
        buffer.writeString(Self.frameText)
        buffer.moveReaderIndex(forwardBy: 5)
        let envelope = try #require(EventEnvelope(payload: buffer))
        #expect(envelope.offset == "99-9")
        #expect(envelope.frame == ByteBuffer(string: Self.frameText))
    }

    @Test("payload(frame:) round-trips")
    func roundTrip() throws {
        let frame = ByteBuffer(string: Self.frameText)
        let payload = EventEnvelope.payload(frame: frame)
        #expect(String(buffer: payload) == "- " + Self.frameText)
        let envelope = try #require(EventEnvelope(payload: payload))
        #expect(envelope.offset == nil)
        #expect(envelope.frame == frame)
    }

    @Test("an empty frame after the separator is kept empty")
    func emptyFrame() throws {
        let envelope = try #require(EventEnvelope(payload: ByteBuffer(string: "5-1 ")))
        #expect(envelope.offset == "5-1")
        #expect(envelope.frame.readableBytes == 0)
    }
}
