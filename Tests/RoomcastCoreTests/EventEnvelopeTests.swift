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

/// The per-recipient form: `<offset> @<userId>,<userId>… <length of the first frame> <first frame><second frame>`.
@Suite("EventEnvelope, per-recipient form")
struct PerRecipientEnvelopeTests {
    static let listed = #"42["element:reaction:added",{"stats":{"hasReacted":true},"offset":"7-1"}]"#
    static let others = #"42["element:reaction:added",{"stats":{"hasReacted":false},"offset":"7-1"}]"#

    static func payload(offset: String = "7-1", users: String, listed: String = listed, others: String = others, length: Int? = nil) -> ByteBuffer {
        ByteBuffer(string: "\(offset) @\(users) \(length ?? listed.utf8.count) \(listed)\(others)")
    }

    @Test("parses the offset, the listed users and both frames")
    func parses() throws {
        let envelope = try #require(EventEnvelope(payload: Self.payload(users: "u1,u2,u3")))
        #expect(envelope.offset == "7-1")
        #expect(envelope.listedUsers == ["u1", "u2", "u3"])
        #expect(envelope.listedFrame == ByteBuffer(string: Self.listed))
        #expect(envelope.frame == ByteBuffer(string: Self.others))
    }

    @Test("frame(for:) gives listed users the first frame and everyone else the second, matching ids exactly")
    func frameForRecipient() throws {
        let envelope = try #require(EventEnvelope(payload: Self.payload(users: "u1,u22")))
        #expect(envelope.frame(for: "u1") == ByteBuffer(string: Self.listed))
        #expect(envelope.frame(for: "u22") == ByteBuffer(string: Self.listed))
        for other in ["u2", "u11", "u", "u1,u22", "", "U1", " u1"] {
            #expect(envelope.frame(for: other) == ByteBuffer(string: Self.others), "\(other)")
        }
    }

    @Test("an empty user list gives everyone the second frame")
    func emptyList() throws {
        let envelope = try #require(EventEnvelope(payload: Self.payload(users: "")))
        #expect(envelope.offset == "7-1")
        #expect(envelope.listedUsers.isEmpty)
        #expect(envelope.frame(for: "u1") == ByteBuffer(string: Self.others))
        #expect(envelope.frame(for: "") == ByteBuffer(string: Self.others))
    }

    @Test("the length counts bytes, not characters: multi-byte text splits at the right place")
    func byteLength() throws {
        let listed = #"42["e",{"text":"🎉 日本 é","mine":true}]"#
        let others = #"42["e",{"text":"🎉 日本 é","mine":false}]"#
        #expect(listed.utf8.count != listed.count)
        let envelope = try #require(EventEnvelope(payload: Self.payload(users: "a", listed: listed, others: others)))
        #expect(envelope.frame(for: "a") == ByteBuffer(string: listed))
        #expect(envelope.frame(for: "b") == ByteBuffer(string: others))
    }

    @Test("a frame that itself contains ' @' or spaces is not mistaken for a header")
    func framesWithSpaces() throws {
        let listed = #"42["e",{"text":"a @b 12 c","x":1}]"#
        let others = #"42["e",{"text":"a @b 12 c","x":2}]"#
        let envelope = try #require(EventEnvelope(payload: Self.payload(users: "b", listed: listed, others: others)))
        #expect(envelope.frame(for: "b") == ByteBuffer(string: listed))
        #expect(envelope.frame(for: "a") == ByteBuffer(string: others))
        // The single-frame form's frame may start with anything but '@'.
        let plain = try #require(EventEnvelope(payload: ByteBuffer(string: "1-0 " + listed)))
        #expect(plain.listedFrame == nil)
        #expect(plain.listedUsers.isEmpty)
        #expect(plain.frame(for: "b") == ByteBuffer(string: listed))
    }

    @Test("a partly read buffer is parsed from its reader index")
    func partlyRead() throws {
        var buffer = ByteBuffer(string: "xyz")
        var payload = Self.payload(users: "u1")
        buffer.writeBuffer(&payload)
        buffer.moveReaderIndex(forwardBy: 3)
        let envelope = try #require(EventEnvelope(payload: buffer))
        #expect(envelope.frame(for: "u1") == ByteBuffer(string: Self.listed))
        #expect(envelope.frame(for: "u2") == ByteBuffer(string: Self.others))
    }

    @Test("malformed headers are refused")
    func malformed() {
        let bad: [String] = [
            "7-1 @u1",  // nothing after the users
            "7-1 @u1,u2",  // no space after the users
            "7-1 @u1 ",  // no length
            "7-1 @u1 12",  // no space after the length
            "7-1 @u1 x12 " + Self.listed + Self.others,  // a length that is not a number
            "7-1 @u1 1.5 " + Self.listed + Self.others,
            "7-1 @u1  " + Self.listed + Self.others,  // empty length
            "7-1 @u1 -3 " + Self.listed + Self.others,  // negative length
            "7-1 @u1 \(Self.listed.utf8.count + Self.others.utf8.count + 1) " + Self.listed + Self.others,  // longer than the rest
            "7-1 @u1 99999999999999999999999 " + Self.listed,  // overflowing length
        ]
        for text in bad {
            #expect(EventEnvelope(payload: ByteBuffer(string: text)) == nil, "\(text)")
        }
    }
}
