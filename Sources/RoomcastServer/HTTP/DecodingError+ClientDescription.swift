import Foundation

extension DecodingError {
    /// Which field was wrong and how, without Swift type names a client cannot act on; shared by
    /// REST bodies and socket event payloads.
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
            guard field.isEmpty else { return "field '\(field)': \(context.debugDescription)" }
            // JSONDecoder's own parse failure; a refusal of the whole (valid) object, such as an
            // update without fields, explains itself.
            return context.debugDescription.hasPrefix("The given data was not valid JSON") ? "the payload is not valid JSON" : context.debugDescription
        @unknown default:
            return "the payload could not be read"
        }
    }

    private static func name(of type: Any.Type) -> String {
        switch type {
        case is String.Type: return "a string"
        case is Int.Type, is Double.Type, is Int64.Type: return "a number"
        case is Bool.Type: return "true or false"
        // JSONDecoder names a keyed container `[String: Any]`: a collection, but a JSON object.
        case is [String: Any].Type: return "an object"
        default: return type is any Collection.Type ? "an array" : "an object"
        }
    }
}
