public import NIOCore

/// What travels on a pub/sub channel: the event's stream offset (or `-` when it has none), a
/// space, then the complete Socket.IO frame text:
///
///     <offset> <frame>
///
/// An event that differs per recipient (a reaction's `stats.hasReacted`) carries two frames and
/// the users who get the first:
///
///     <offset> @<userId>,<userId>… <length of the first frame> <first frame><second frame>
///
/// A volatile event (a canvas preview) has no offset and names the socket that sent it, which
/// does not get it back:
///
///     ~<socketId> <frame>
///
/// Nodes forward frame bytes without decoding the JSON; the header lets them pick a frame and
/// know where they are in a room's stream without parsing anything.
public struct EventEnvelope: Sendable {
    /// The room stream offset, when the event has one.
    public var offset: Substring?
    /// For a volatile event, the socket it came from: it is neither held nor replayed, and goes
    /// to every socket of the channel but this one.
    public var volatileSender: Substring?
    /// The frame for everyone, or for everyone not in ``listedUsers``.
    public var frame: ByteBuffer
    /// The frame for the users in ``listedUsers``, for per-recipient events.
    public var listedFrame: ByteBuffer?
    /// Who gets ``listedFrame``.
    public var listedUsers: Set<Substring> = []

    /// An envelope read back from a room's stream (see `RoomEventLog`).
    public init(offset: Substring?, frame: ByteBuffer, listedFrame: ByteBuffer? = nil, listedUsers: Set<Substring> = []) {
        self.offset = offset
        self.frame = frame
        self.listedFrame = listedFrame
        self.listedUsers = listedUsers
    }

    /// Splits a published payload; `nil` when it is not an envelope.
    public init?(payload: ByteBuffer) {
        var rest = payload
        guard let head = rest.readWord() else { return nil }
        if head.first == "~" {
            offset = nil
            volatileSender = Substring(head.dropFirst())
            frame = rest
            return
        }
        offset = head == "-" ? nil : Substring(head)
        if rest.readableBytesView.first == UInt8(ascii: "@") {
            rest.moveReaderIndex(forwardBy: 1)
            guard let users = rest.readWord(), let lengthText = rest.readWord(), let length = Int(lengthText),
                let listed = rest.readSlice(length: length)
            else { return nil }
            listedUsers = Set(users.split(separator: ","))
            listedFrame = listed
        }
        frame = rest
    }

    /// The frame for a recipient.
    public func frame(for user: String) -> ByteBuffer {
        if let listedFrame, listedUsers.contains(Substring(user)) { return listedFrame }
        return frame
    }

    /// The payload to publish for a frame without an offset (per-user events).
    public static func payload(frame: ByteBuffer) -> ByteBuffer {
        var payload = ByteBuffer(string: "- ")
        payload.writeImmutableBuffer(frame)
        return payload
    }

    /// The payload to publish for a volatile frame from socket `sender` (a canvas preview).
    public static func volatilePayload(frame: ByteBuffer, from sender: String) -> ByteBuffer {
        var payload = ByteBuffer(string: "~\(sender) ")
        payload.writeImmutableBuffer(frame)
        return payload
    }
}

extension ByteBuffer {
    /// Reads up to the next space (consumed, not returned); `nil` when there is none.
    fileprivate mutating func readWord() -> String? {
        guard let space = readableBytesView.firstIndex(of: UInt8(ascii: " ")) else { return nil }
        let word = readString(length: space - readerIndex)
        moveReaderIndex(forwardBy: 1)
        return word
    }
}
