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

extension DecodingError {
    /// Which field was wrong and how, without Swift type names a client cannot act on.
    var clientDescription: String {
        func path(_ codingPath: [any CodingKey]) -> String {
            codingPath.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
        }
        switch self {
        case .keyNotFound(let key, let context):
            let parent = path(context.codingPath)
            return "missing field '\(parent.isEmpty ? key.stringValue : parent + "." + key.stringValue)'"
        case .typeMismatch(let type, let context):
            return "field '\(path(context.codingPath))' must be \(Self.name(of: type))"
        case .valueNotFound(let type, let context):
            return "field '\(path(context.codingPath))' must be \(Self.name(of: type)), not null"
        case .dataCorrupted(let context):
            let field = path(context.codingPath)
            return field.isEmpty ? "the payload is not valid JSON" : "field '\(field)': \(context.debugDescription)"
        @unknown default:
            return "the payload could not be read"
        }
    }

    private static func name(of type: Any.Type) -> String {
        switch type {
        case is String.Type: return "a string"
        case is Int.Type, is Double.Type, is Int64.Type: return "a number"
        case is Bool.Type: return "true or false"
        default: return type is any Collection.Type ? "an array" : "an object"
        }
    }
}
