import Foundation
import NIOCore
import RedisClient

/// A mutation script's reply: fresh, or the reply recorded when a retried request first ran
/// (`_request.lua` answers `{'replayed', <reply as JSON>}`), rebuilt so it parses the same way.
/// A replayed mutation changed nothing, so nothing it caused is sent again.
struct MutationReply {
    /// The reply to parse.
    var reply: RedisReply
    /// Whether it is a retry's recorded reply.
    var isReplay: Bool

    init(_ reply: RedisReply) throws(RoomcastError) {
        guard case .array(let parts) = reply, parts.count == 2, parts[0].string == "replayed", case .bulk(let json) = parts[1] else {
            self.reply = reply
            isReplay = false
            return
        }
        guard let values = try? JSONDecoder().decode([Scalar].self, from: Data(json.readableBytesView)) else {
            throw RoomcastError(.internalError, "unreadable recorded reply of a retried request")
        }
        self.reply = .array(values.map(\.reply))
        isReplay = true
    }

    /// A string or a number of the recorded array.
    private enum Scalar: Decodable {
        case text(String)
        case number(Int64)

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let number = try? container.decode(Int64.self) {
                self = .number(number)
            } else {
                self = .text(try container.decode(String.self))
            }
        }

        var reply: RedisReply {
            switch self {
            case .text(let text): .bulk(ByteBuffer(string: text))
            case .number(let number): .integer(number)
            }
        }
    }
}
