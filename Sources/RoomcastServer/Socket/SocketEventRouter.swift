import Foundation
public import NIOCore
public import RoomcastCore
import SocketIO

/// Client events by name, each with a typed payload and result.
///
/// A handler gets its payload already decoded (a JSON object into `Payload`) and returns a value
/// that becomes the ack's `data`; a thrown ``RoomcastError`` becomes the ack's `error`.
///
/// Public only for ``decodeRequest(of:from:)``: the codec fuzz target (`Fuzz/`) reaches the
/// request types through it, with no socket and no Redis.
public struct SocketEventRouter: Sendable {
    // Untyped `throws` in closure types: Swift 6.3 crashes lowering typed-throws closures here.
    /// Runs an event whose payload is already decoded.
    typealias Call = @Sendable (SocketState) async throws -> ByteBuffer
    /// Decodes an event's payload into the call that runs it.
    typealias Handler = @Sendable (ByteBuffer) throws -> Prepared

    /// An event decoded, ready to run.
    struct Prepared: Sendable {
        /// The room it acts in, which orders it against the socket's other events of that room;
        /// nil for an event of no room.
        let room: String?
        let call: Call
        let name: String

        /// Runs it: its ack's `data`.
        /// - Throws: what the handler threw, anything but a ``RoomcastError`` as `internal`.
        func run(_ state: SocketState) async throws(RoomcastError) -> ByteBuffer {
            do {
                return try await call(state)
            } catch let error as RoomcastError {
                throw error
            } catch {
                throw RoomcastError(.internalError, "the server could not handle '\(name)'")
            }
        }
    }

    private var handlers: [String: Handler] = [:]

    /// Registers event `name`.
    mutating func on<Payload: Decodable & Sendable, Result: Encodable & Sendable>(
        _ name: String,
        _ payload: Payload.Type,
        _ handler: @escaping @Sendable (SocketState, Payload) async throws -> Result
    ) {
        on(name, payload, json: { state, request in
            let result = try await handler(state, request)
            do {
                return try JSONCoding.encode(result)
            } catch {
                throw RoomcastError(.internalError, "could not encode the result of \(name)")
            }
        })
    }

    /// Registers event `name` whose handler returns its ack's `data` as JSON already.
    mutating func on<Payload: Decodable & Sendable>(
        _ name: String,
        _ payload: Payload.Type,
        json handler: @escaping @Sendable (SocketState, Payload) async throws -> ByteBuffer
    ) {
        handlers[name] = { json in
            let decoded = try Self.decode(Payload.self, from: json)
            return Prepared(room: (decoded as? any RoomScopedRequest)?.roomId.rawValue, call: { state in try await handler(state, decoded) }, name: name)
        }
    }

    /// Registers event `name` whose payload is read field by field (``FlatPayload``) rather than
    /// with `JSONDecoder`, and whose handler returns its ack's `data` as JSON: for events sent
    /// many times a second (canvas previews).
    mutating func on<Payload: FlatPayload>(
        _ name: String,
        flat payload: Payload.Type,
        json handler: @escaping @Sendable (SocketState, Payload) async throws -> ByteBuffer
    ) {
        handlers[name] = { json in
            guard let object = JSONObjectReader(Array(json.readableBytesView)) else {
                throw RoomcastError(.invalidPayload, "the payload must be a JSON object with distinct member names")
            }
            let decoded = try Payload(reading: object)
            return Prepared(room: (decoded as? any RoomScopedRequest)?.roomId.rawValue, call: { state in try await handler(state, decoded) }, name: name)
        }
    }

    /// Finds event `name` and decodes its first argument: everything before running it, done as
    /// the packet arrives.
    /// - Throws: `unknown_event` or `invalid_payload`.
    func prepare(_ name: String, payload: ByteBuffer) throws(RoomcastError) -> Prepared {
        guard let handler = handlers[name] else {
            throw RoomcastError(.unknownEvent, "unknown event '\(name)'")
        }
        // The codec validated the JSON; the first byte tells an object from other values.
        guard payload.readableBytesView.first == UInt8(ascii: "{") else {
            throw RoomcastError(.invalidPayload, "the payload of '\(name)' must be a JSON object")
        }
        do {
            return try handler(payload)
        } catch let error as RoomcastError {
            throw error
        } catch {
            throw RoomcastError(.internalError, "the server could not handle '\(name)'")
        }
    }

    private static func decode<Payload: Decodable>(_ type: Payload.Type, from json: ByteBuffer) throws(RoomcastError) -> Payload {
        do {
            return try JSONCoding.decode(type, from: json)
        } catch let error as DecodingError {
            throw RoomcastError(.invalidPayload, error.clientDescription)
        } catch {
            throw RoomcastError(.invalidPayload, "the payload could not be read")
        }
    }
}

extension SocketEventRouter {
    /// The node's events, for decoding without a socket.
    private static let events = SocketEvents.router()

    /// The names of the client events the node handles.
    public static var eventNames: [String] { events.handlers.keys.sorted() }

    /// Decodes `payload` (an event's first argument) as the request of event `name`, exactly as
    /// an incoming event is decoded, without running it.
    /// - Throws: what the client would get: `unknown_event` or `invalid_payload`.
    public static func decodeRequest(of name: String, from payload: ByteBuffer) throws(RoomcastError) {
        _ = try events.prepare(name, payload: payload)
    }
}

/// A request that acts in one room: the socket's events of one room run in order, those of
/// different rooms independently.
protocol RoomScopedRequest {
    var roomId: RoomID { get }
}

/// A small, flat event payload read from its JSON object's members directly: no `JSONDecoder`,
/// whose allocations cost more than the reading for a payload of a few numbers and ids. Unknown
/// members are ignored, as `Decodable` payloads ignore them.
protocol FlatPayload: Sendable {
    /// - Throws: `invalid_payload` naming the first member that is missing or wrong.
    init(reading object: JSONObjectReader) throws(RoomcastError)
}

extension JSONObjectReader {
    /// Member `name` as an identifier of its kind.
    /// - Throws: `invalid_payload` naming it when missing, not a string or not a valid id.
    func identifier<Kind>(_ name: String) throws(RoomcastError) -> Identifier<Kind> {
        guard let text = string(name) else {
            throw RoomcastError(.invalidPayload, "\(name): \(contains(name) ? "must be a string" : "is required")")
        }
        guard let id = Identifier<Kind>(text) else {
            throw RoomcastError(.invalidPayload, "\(name): must be 1-64 characters of A-Z, a-z, 0-9, '_' and '-'")
        }
        return id
    }

    /// Member `name` as a number.
    /// - Throws: `invalid_payload` naming it when missing or not a number.
    func requiredNumber(_ name: String) throws(RoomcastError) -> Double {
        guard let value = number(name) else {
            throw RoomcastError(.invalidPayload, "\(name): \(contains(name) ? "must be a number" : "is required")")
        }
        return value
    }
}
