import Foundation

/// A decoded JSON value for assertions, without Codable models:
/// `#expect(try JSONValue(raw)["data"]["message"]["text"] == "hi")`.
///
/// Subscripts never fail: a missing key, an index out of range or a subscript on something
/// that is not a container yields `.null`, so a chain reads like the path it checks. Use
/// `objectValue` to tell a missing key from an explicit `null`.
public enum JSONValue: Hashable, Sendable {
    /// `null`, and what a subscript yields for anything missing.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// Every JSON number; integers up to 2^53 are exact.
    case number(Double)
    /// A string.
    case string(String)
    /// An array.
    case array([JSONValue])
    /// An object; key order is not kept.
    case object([String: JSONValue])

    /// Decodes one JSON value (an object, array or bare scalar).
    public init(_ text: String) throws(SocketIOTestError) {
        do {
            self = try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))
        } catch {
            throw SocketIOTestError.invalidJSON("\(error): \(text.prefix(200))")
        }
    }

    /// The member named `key`, or `.null` when absent or when this is not an object.
    public subscript(key: String) -> JSONValue {
        guard case .object(let members) = self else { return .null }
        return members[key] ?? .null
    }

    /// The element at `index`, or `.null` when out of range or when this is not an array.
    public subscript(index: Int) -> JSONValue {
        guard case .array(let elements) = self, elements.indices.contains(index) else { return .null }
        return elements[index]
    }

    /// The string, if this is one.
    public var stringValue: String? {
        if case .string(let value) = self { value } else { nil }
    }

    /// The number, if this is one.
    public var doubleValue: Double? {
        if case .number(let value) = self { value } else { nil }
    }

    /// The number, if this is one with no fractional part that fits in `Int`.
    public var intValue: Int? {
        if case .number(let value) = self { Int(exactly: value) } else { nil }
    }

    /// The boolean, if this is one.
    public var boolValue: Bool? {
        if case .bool(let value) = self { value } else { nil }
    }

    /// The elements, if this is an array.
    public var arrayValue: [JSONValue]? {
        if case .array(let value) = self { value } else { nil }
    }

    /// The members, if this is an object.
    public var objectValue: [String: JSONValue]? {
        if case .object(let value) = self { value } else { nil }
    }

    /// Whether this is `null` (or came from a missing key).
    public var isNull: Bool { self == .null }
}

extension JSONValue: Codable {
    /// Decodes any JSON value; booleans stay booleans (the decoder will not read `true` as a number).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    /// Encodes the value back to JSON.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .number(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }
}

extension JSONValue: CustomStringConvertible {
    /// Compact JSON with sorted keys, for failure messages.
    public var description: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(self) else { return "<unencodable>" }
        return String(decoding: data, as: UTF8.self)
    }
}
