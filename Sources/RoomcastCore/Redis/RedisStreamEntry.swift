import NIOCore
import RedisClient

/// One entry of an XRANGE / XREADGROUP / XCLAIM reply: `[id, [field, value, …]]`.
struct RedisStreamEntry {
    /// The entry id (`<ms>-<seq>`).
    var id: ByteBuffer
    /// Its fields; values stay bytes.
    var fields: [String: ByteBuffer]

    /// `nil` for anything else (an entry deleted meanwhile comes back as null).
    init?(_ reply: RedisReply) {
        guard case .array(let pair) = reply, pair.count == 2, case .bulk(let id) = pair[0], case .array(let flat) = pair[1] else {
            return nil
        }
        var fields: [String: ByteBuffer] = [:]
        var index = 0
        while index + 1 < flat.count {
            if let name = flat[index].string, case .bulk(let value) = flat[index + 1] { fields[name] = value }
            index += 2
        }
        self.id = id
        self.fields = fields
    }
}
