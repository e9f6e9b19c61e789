public import RedisClient

extension RedisReply {
    /// An `HGETALL`-style `[field, value, field, value ...]` array as a dictionary.
    public var fields: [String: String] {
        guard case .array(let elements) = self else { return [:] }
        var result: [String: String] = [:]
        result.reserveCapacity(elements.count / 2)
        var index = elements.startIndex
        while index + 1 < elements.endIndex {
            if let key = elements[index].string, let value = elements[index + 1].string {
                result[key] = value
            }
            index += 2
        }
        return result
    }
}
