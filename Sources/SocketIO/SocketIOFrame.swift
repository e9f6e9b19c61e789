public import NIOCore

/// Builds complete Engine.IO message frames (`4` + Socket.IO packet) in a single buffer.
///
/// The result can be written unchanged to many WebSocket connections, or joined into
/// polling bodies with `EngineIOPayload.join(frames:)`. JSON arguments are trusted to be
/// one valid JSON value each (typically `JSONEncoder` output); strings supplied here are
/// escaped. A namespace must start with `/` and must not contain `,`; `/` (or empty) is
/// the default namespace and is omitted from the frame.
public enum SocketIOFrame: Sendable {
    private static let allocator = ByteBufferAllocator()

    /// `42["name",payload]`: an event with one JSON argument.
    public static func event(name: String, payload: ByteBuffer, namespace: String = "/", ackId: Int? = nil)
        -> ByteBuffer
    {
        self.frame(.event, namespace: namespace, ackId: ackId, capacity: name.utf8.count + payload.readableBytes) {
            self.writeArray(name: name, into: &$0) { $0.writeImmutableBuffer(payload) }
        }
    }

    /// `42["name",payload]`: an event with one JSON argument given as bytes.
    public static func event(
        name: String,
        payload: some Collection<UInt8>,
        namespace: String = "/",
        ackId: Int? = nil
    ) -> ByteBuffer {
        self.frame(.event, namespace: namespace, ackId: ackId, capacity: name.utf8.count + payload.count) {
            self.writeArray(name: name, into: &$0) { $0.writeBytes(payload) }
        }
    }

    /// `42["name",arg1,arg2,…]`: an event with any number of JSON arguments; with `attachments`,
    /// a BINARY_EVENT `45<n>-[…]` whose arguments hold placeholders for the `n` binary frames
    /// sent after it.
    public static func event(
        name: String,
        arguments: [ByteBuffer],
        namespace: String = "/",
        ackId: Int? = nil,
        attachments: Int? = nil
    ) -> ByteBuffer {
        let capacity = arguments.reduce(name.utf8.count) { $0 + 1 + $1.readableBytes }
        return self.frame(.event, namespace: namespace, ackId: ackId, attachments: attachments, capacity: capacity) {
            self.writeArray(name: name, arguments: arguments, into: &$0)
        }
    }

    /// `43<id>[payload]`: the reply to a client event that asked for an ack.
    public static func ack(id: Int, payload: ByteBuffer, namespace: String = "/") -> ByteBuffer {
        self.frame(.ack, namespace: namespace, ackId: id, capacity: payload.readableBytes) {
            self.writeArray(name: nil, into: &$0) { $0.writeImmutableBuffer(payload) }
        }
    }

    /// `43<id>[payload]`: an ack with one JSON argument given as bytes.
    public static func ack(id: Int, payload: some Collection<UInt8>, namespace: String = "/") -> ByteBuffer {
        self.frame(.ack, namespace: namespace, ackId: id, capacity: payload.count) {
            self.writeArray(name: nil, into: &$0) { $0.writeBytes(payload) }
        }
    }

    /// `43<id>[arg1,…]`: an ack with any number of JSON arguments, including none; with
    /// `attachments`, a BINARY_ACK `46<n>-<id>[…]`.
    public static func ack(id: Int, arguments: [ByteBuffer], namespace: String = "/", attachments: Int? = nil) -> ByteBuffer {
        let capacity = arguments.reduce(0) { $0 + 1 + $1.readableBytes }
        return self.frame(.ack, namespace: namespace, ackId: id, attachments: attachments, capacity: capacity) {
            self.writeArray(name: nil, arguments: arguments, into: &$0)
        }
    }

    /// `40{"sid":"…"}`: accepts a namespace connection.
    public static func connect(sid: String, namespace: String = "/") -> ByteBuffer {
        self.frame(.connect, namespace: namespace, ackId: nil, capacity: 10 + sid.utf8.count) {
            $0.writeStaticString("{\"sid\":")
            JSONEscaper.writeQuoted(sid, into: &$0)
            $0.writeInteger(UInt8(ascii: "}"))
        }
    }

    /// `44{"message":"…","data":{"code":"…"}}`: refuses a namespace connection; `data` is omitted when `code` is nil.
    public static func connectError(message: String, code: String? = nil, namespace: String = "/") -> ByteBuffer {
        let capacity = 40 + message.utf8.count + (code?.utf8.count ?? 0)
        return self.frame(.connectError, namespace: namespace, ackId: nil, capacity: capacity) {
            $0.writeStaticString("{\"message\":")
            JSONEscaper.writeQuoted(message, into: &$0)
            if let code {
                $0.writeStaticString(",\"data\":{\"code\":")
                JSONEscaper.writeQuoted(code, into: &$0)
                $0.writeInteger(UInt8(ascii: "}"))
            }
            $0.writeInteger(UInt8(ascii: "}"))
        }
    }

    /// `44{"message":"…","data":<data>}`: refuses a namespace connection with `data`, one JSON
    /// value, for the client's error; `data` is omitted when nil.
    public static func connectError(message: String, data: ByteBuffer?, namespace: String = "/") -> ByteBuffer {
        let capacity = 40 + message.utf8.count + (data?.readableBytes ?? 0)
        return self.frame(.connectError, namespace: namespace, ackId: nil, capacity: capacity) {
            $0.writeStaticString("{\"message\":")
            JSONEscaper.writeQuoted(message, into: &$0)
            if let data {
                $0.writeStaticString(",\"data\":")
                $0.writeImmutableBuffer(data)
            }
            $0.writeInteger(UInt8(ascii: "}"))
        }
    }

    /// `41`: tells the client it was removed from the namespace.
    public static func disconnect(namespace: String = "/") -> ByteBuffer {
        self.frame(.disconnect, namespace: namespace, ackId: nil, capacity: 0) { _ in }
    }

    private static func frame(
        _ kind: SocketIOPacketKind,
        namespace: String,
        ackId: Int?,
        attachments: Int? = nil,
        capacity: Int,
        body: (inout ByteBuffer) -> Void
    ) -> ByteBuffer {
        assert(namespace.isEmpty || (namespace.first == "/" && !namespace.contains(",")), "invalid namespace")
        assert((ackId ?? 0) >= 0, "ack ids are non-negative")
        let isDefaultNamespace = namespace.isEmpty || namespace == "/"
        var buffer = self.allocator.buffer(capacity: 24 + (isDefaultNamespace ? 0 : namespace.utf8.count) + capacity)
        if let attachments {
            // BINARY_EVENT is 5, BINARY_ACK 6: three above EVENT and ACK.
            buffer.writeMultipleIntegers(UInt8(ascii: "4"), kind.digit + 3)
            buffer.writeString(String(attachments))
            buffer.writeInteger(UInt8(ascii: "-"))
        } else {
            buffer.writeMultipleIntegers(UInt8(ascii: "4"), kind.digit)
        }
        if !isDefaultNamespace {
            buffer.writeString(namespace)
            buffer.writeInteger(UInt8(ascii: ","))
        }
        if let ackId {
            buffer.writeString(String(ackId))
        }
        body(&buffer)
        return buffer
    }

    private static func writeArray(name: String?, into buffer: inout ByteBuffer, element: (inout ByteBuffer) -> Void) {
        buffer.writeInteger(UInt8(ascii: "["))
        if let name {
            JSONEscaper.writeQuoted(name, into: &buffer)
            buffer.writeInteger(UInt8(ascii: ","))
        }
        element(&buffer)
        buffer.writeInteger(UInt8(ascii: "]"))
    }

    private static func writeArray(name: String?, arguments: [ByteBuffer], into buffer: inout ByteBuffer) {
        buffer.writeInteger(UInt8(ascii: "["))
        var needsComma = false
        if let name {
            JSONEscaper.writeQuoted(name, into: &buffer)
            needsComma = true
        }
        for argument in arguments {
            if needsComma { buffer.writeInteger(UInt8(ascii: ",")) }
            buffer.writeImmutableBuffer(argument)
            needsComma = true
        }
        buffer.writeInteger(UInt8(ascii: "]"))
    }
}
