import Foundation
import NIOCore
import RoomcastCore

/// Client events by name, each with a typed payload and result.
///
/// A handler gets its payload already decoded (a JSON object into `Payload`) and returns a value
/// that becomes the ack's `data`; a thrown ``RoomcastError`` becomes the ack's `error`.
struct SocketEventRouter: Sendable {
    // Untyped `throws` in closure types: Swift 6.3 crashes lowering typed-throws closures here.
    typealias Handler = @Sendable (SocketState, ByteBuffer) async throws -> ByteBuffer

    private var handlers: [String: Handler] = [:]

    /// Registers event `name`.
    mutating func on<Payload: Decodable & Sendable, Result: Encodable & Sendable>(
        _ name: String,
        _ payload: Payload.Type,
        _ handler: @escaping @Sendable (SocketState, Payload) async throws -> Result
    ) {
        handlers[name] = { state, json in
            let decoded = try Self.decode(Payload.self, from: json)
            let result = try await handler(state, decoded)
            do {
                return try JSONCoding.encode(result)
            } catch {
                throw RoomcastError(.internalError, "could not encode the result of \(name)")
            }
        }
    }

    /// Runs the handler of event `name` with its first argument.
    func handle(_ name: String, state: SocketState, payload: ByteBuffer) async throws(RoomcastError) -> ByteBuffer {
        guard let handler = handlers[name] else {
            throw RoomcastError(.unknownEvent, "unknown event '\(name)'")
        }
        // The codec validated the JSON; the first byte tells an object from other values.
        guard payload.readableBytesView.first == UInt8(ascii: "{") else {
            throw RoomcastError(.invalidPayload, "the payload of '\(name)' must be a JSON object")
        }
        do {
            return try await handler(state, payload)
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
