public import Foundation
public import NIOCore

/// The arguments of an event or an ack as they travel: each argument's JSON, and the binary
/// attachments that `{"_placeholder":true,"num":n}` objects in them stand for.
///
/// A value encoded here (``init(_:)``) turns each `Data` inside it into an attachment, and a
/// value decoded here (``decode(_:at:)``) gets each attachment back as `Data`: a payload with
/// `Data` fields travels as a BINARY_EVENT, as python-socketio sends `bytes` and Node a `Buffer`.
public struct SocketIOArguments: Sendable, Encodable {
    /// Each argument's JSON, in order.
    public var json: [ByteBuffer]
    /// The binary attachments the arguments' placeholders stand for, in order.
    public var attachments: [ByteBuffer]

    /// Arguments as they are.
    public init(json: [ByteBuffer] = [], attachments: [ByteBuffer] = []) {
        self.json = json
        self.attachments = attachments
    }

    /// No arguments: an ack with none (`43<id>[]`).
    public static let none = SocketIOArguments()

    /// One argument: `value` as JSON, each `Data` in it an attachment.
    /// - Throws: what `JSONEncoder` throws for `value`.
    public init(_ value: some Encodable) throws {
        if let arguments = value as? SocketIOArguments {
            self = arguments
            return
        }
        let collector = AttachmentCollector()
        let encoder = JSONEncoder()
        encoder.dataEncodingStrategy = .custom { data, encoder in
            guard let collector = encoder.userInfo[AttachmentCollector.key] as? AttachmentCollector else {
                throw EncodingError.invalidValue(data, .init(codingPath: encoder.codingPath, debugDescription: "no attachments to add to"))
            }
            var container = encoder.container(keyedBy: Placeholder.CodingKeys.self)
            try container.encode(true, forKey: ._placeholder)
            try container.encode(collector.attachments.count, forKey: .num)
            collector.attachments.append(ByteBuffer(bytes: data))
        }
        encoder.userInfo[AttachmentCollector.key] = collector
        let json = try encoder.encode(value)
        self.init(json: [ByteBuffer(bytes: json)], attachments: collector.attachments)
    }

    /// Whether an attachment comes with them (a BINARY_EVENT or BINARY_ACK).
    public var isBinary: Bool { !attachments.isEmpty }

    /// Argument `index` decoded as `type`, each placeholder in it read as its attachment (`Data`);
    /// a missing argument is decoded as JSON `null` (an `Optional` gets nil).
    /// - Throws: what `JSONDecoder` throws.
    public func decode<Value: Decodable>(_ type: Value.Type = Value.self, at index: Int = 0) throws -> Value {
        let decoder = JSONDecoder()
        decoder.userInfo[AttachmentCollector.attachmentsKey] = attachments
        decoder.dataDecodingStrategy = .custom { decoder in
            if let placeholder = try? Placeholder(from: decoder) {
                guard placeholder._placeholder, let attachments = decoder.userInfo[AttachmentCollector.attachmentsKey] as? [ByteBuffer],
                    attachments.indices.contains(placeholder.num)
                else {
                    throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "no attachment \(placeholder.num)"))
                }
                return Data(attachments[placeholder.num].readableBytesView)
            }
            // Binary data sent as base64 text, as `JSONEncoder` writes `Data`.
            let text = try decoder.singleValueContainer().decode(String.self)
            guard let data = Data(base64Encoded: text) else {
                throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "neither an attachment nor base64"))
            }
            return data
        }
        let bytes = json.indices.contains(index) ? Data(json[index].readableBytesView) : Data("null".utf8)
        return try decoder.decode(Value.self, from: bytes)
    }

    /// Not for `JSONEncoder`: a value handed back as a reply is sent as it is.
    public func encode(to encoder: any Encoder) throws {
        throw EncodingError.invalidValue(self, .init(codingPath: encoder.codingPath, debugDescription: "SocketIOArguments are sent as they are, not encoded"))
    }
}

/// `{"_placeholder":true,"num":n}`.
private struct Placeholder: Decodable {
    enum CodingKeys: String, CodingKey { case _placeholder, num }
    var _placeholder: Bool
    var num: Int
}

/// Where an encoding puts the attachments it meets. A class: `JSONEncoder` hands its user info
/// to the data strategy by value.
private final class AttachmentCollector: @unchecked Sendable {
    static let key = CodingUserInfoKey(rawValue: "SocketIOServer.attachmentCollector")!
    static let attachmentsKey = CodingUserInfoKey(rawValue: "SocketIOServer.attachments")!
    var attachments: [ByteBuffer] = []
}
