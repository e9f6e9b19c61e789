import Foundation
public import NIOCore

/// The one JSON configuration for everything Roomcast sends and stores.
public enum JSONCoding {
    /// Encodes a value to JSON bytes.
    public static func encode(_ value: some Encodable) throws -> ByteBuffer {
        ByteBuffer(bytes: try JSONEncoder.roomcast.encode(value))
    }

    /// Decodes a value from JSON bytes.
    public static func decode<Value: Decodable>(_ type: Value.Type, from bytes: ByteBuffer) throws -> Value {
        try JSONDecoder().decode(type, from: Data(bytes.readableBytesView))
    }
}

extension JSONEncoder {
    /// Keys sorted: this Foundation writes an object's keys in its dictionary's order, which
    /// differs from one process to the next, so two nodes sent the same event as different
    /// bytes. Slashes are not escaped: URLs in payloads stay readable in `redis-cli`.
    static let roomcast: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()
}
