public import NIOCore
import SocketIO

/// A room event's Socket.IO frame, split around its offset.
///
/// The offset is the id Redis gives the event when the mutation script appends it to the room
/// stream, so the frame is encoded once here with a gap for it; the script joins
/// `prefix + offset + suffix`, stores it and publishes it.
public struct RoomEventFrame: Sendable {
    /// `42["<event>",{...,"offset":"`
    public let prefix: ByteBuffer
    /// `"}]`
    public let suffix: ByteBuffer

    /// Encodes `payload` (which must encode as a JSON object) as `event` with an `offset` field
    /// to be filled in.
    public init(event: ServerEvent, payload: some Encodable) throws {
        try self.init(event: event.rawValue, payload: payload)
    }

    /// Encodes `payload` as an event of any name (``ServerEvent`` names the server's own): its
    /// name is escaped as JSON.
    public init(event name: String, payload: some Encodable) throws {
        try self.init(event: name, object: try JSONCoding.encode(payload))
    }

    /// A frame around a payload already encoded as a JSON object (`{...}`), for a payload spliced
    /// from parts that are encoded once for several uses.
    public init(event name: String, object: ByteBuffer) throws {
        var object = object
        // `{...}` becomes `{...,"offset":"` — the object is reopened to append one more field.
        guard object.readableBytes >= 2, object.getInteger(at: object.writerIndex - 1, as: UInt8.self) == UInt8(ascii: "}") else {
            throw EncodingError.invalidValue(
                String(buffer: object), .init(codingPath: [], debugDescription: "a room event payload must be a JSON object")
            )
        }
        object.moveWriterIndex(to: object.writerIndex - 1)
        if object.readableBytes > 1 { object.writeStaticString(",") }
        object.writeStaticString("\"offset\":\"")
        var frame = SocketIOFrame.event(name: name, payload: object)
        // The codec closed the event array; the closing belongs after the offset.
        frame.moveWriterIndex(to: frame.writerIndex - 1)
        prefix = frame
        suffix = ByteBuffer(string: "\"}]")
    }

    /// The complete frame for an offset, as the script builds it.
    public func frame(offset: String) -> ByteBuffer {
        var frame = prefix
        frame.writeString(offset)
        frame.writeImmutableBuffer(suffix)
        return frame
    }
}
