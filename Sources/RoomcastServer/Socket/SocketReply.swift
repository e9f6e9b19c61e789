import NIOCore
import RoomcastCore
import SocketIO

/// The frames a socket gets back for its packets: acks, `error` events, CONNECT answers.
enum SocketReply {
    /// `43<id>[{"data":<data>}]`
    static func ack(id: Int, data: ByteBuffer) -> ByteBuffer {
        var body = ByteBuffer(string: "{\"data\":")
        body.writeImmutableBuffer(data)
        body.writeStaticString("}")
        return SocketIOFrame.ack(id: id, payload: body)
    }

    /// `43<id>[{"error":{"code":...,"message":...}}]`
    static func ack(id: Int, error: RoomcastError) -> ByteBuffer {
        SocketIOFrame.ack(id: id, payload: encode(ErrorAck(error: .init(code: error.code.rawValue, message: error.message))))
    }

    /// `42["error",{"code":...,"message":...,"event":...}]` for a failure without an ack id.
    static func errorEvent(_ error: RoomcastError, event: String?) -> ByteBuffer {
        SocketIOFrame.event(name: ServerEvent.error.rawValue, payload: encode(ErrorEvent(code: error.code.rawValue, message: error.message, event: event)))
    }

    /// `42["auth:expiring",{"expiresAt":"<ISO 8601>"}]`: the socket's token expires at `seconds`
    /// since 1970; `auth:refresh` with a new one keeps the socket.
    static func authExpiring(at seconds: Int64) -> ByteBuffer {
        SocketIOFrame.event(name: ServerEvent.authExpiring.rawValue, payload: encode(Expiry(expiresAt: Timestamp(milliseconds: seconds * 1000))))
    }

    /// `{"expiresAt":"<ISO 8601>"}`: when a socket's token expires (the `auth:expiring` event
    /// and the `auth:refresh` ack).
    struct Expiry: Encodable, Sendable {
        var expiresAt: Timestamp
    }

    /// `44{"message":...,"data":{"code":...}}`
    static func connectError(_ error: RoomcastError, namespace: String = "/") -> ByteBuffer {
        SocketIOFrame.connectError(message: error.message, code: error.code.rawValue, namespace: namespace)
    }

    private struct ErrorAck: Encodable {
        struct Body: Encodable {
            var code: String
            var message: String
        }
        var error: Body
    }

    private struct ErrorEvent: Encodable {
        var code: String
        var message: String
        var event: String?

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(code, forKey: .code)
            try container.encode(message, forKey: .message)
            // `event: null` says "not tied to an event" explicitly, rather than leaving it out.
            try container.encode(event, forKey: .event)
        }

        enum CodingKeys: String, CodingKey { case code, message, event }
    }

    private static func encode(_ value: some Encodable) -> ByteBuffer {
        // These shapes are plain strings: encoding cannot fail.
        (try? JSONCoding.encode(value)) ?? ByteBuffer(string: "{}")
    }
}
