/// Which master serves each hash slot, as `CLUSTER SLOTS` reported it (and `MOVED` corrected it).
///
/// A plain value: the cluster client keeps one under its lock and replaces or patches it.
struct ClusterTopology: Sendable, Equatable {
    /// The masters, in the order `CLUSTER SLOTS` first named them.
    private(set) var masters: [RedisEndpoint] = []
    /// For each slot, an index into `masters`, or `unassigned`.
    private var owners: [UInt16] = Array(repeating: unassigned, count: HashSlot.count)
    private static let unassigned = UInt16.max

    /// An empty map: no slot has an owner.
    init() {}

    /// Parses a `CLUSTER SLOTS` reply: `[[start, end, [host, port, id, ...], replica ...], ...]`.
    /// - Parameters:
    ///   - reply: the reply.
    ///   - answeredBy: the node that answered, whose host stands in for an empty or `?` host.
    ///   - template: credentials and timeouts every node shares.
    init(clusterSlots reply: RedisReply, answeredBy: RedisEndpoint, template: RedisEndpoint) throws(RedisError) {
        guard case .array(let ranges) = reply else { throw .unexpected(reply, expected: "a CLUSTER SLOTS array") }
        for range in ranges {
            guard case .array(let fields) = range, fields.count >= 3,
                case .integer(let start) = fields[0], case .integer(let end) = fields[1],
                case .array(let master) = fields[2], master.count >= 2,
                let first = HashSlot(rawValue: Int(start)), let last = HashSlot(rawValue: Int(end)), first <= last
            else { throw .unexpected(range, expected: "a CLUSTER SLOTS range") }
            guard let host = master[0].string, case .integer(let port) = master[1] else {
                throw .unexpected(range, expected: "a master's host and port")
            }
            var endpoint = template
            endpoint.host = host.isEmpty || host == "?" ? answeredBy.host : host
            endpoint.port = Int(port)
            endpoint.database = 0
            for slot in first.rawValue...last.rawValue {
                assign(HashSlot(rawValue: Int(slot))!, to: endpoint)
            }
        }
    }

    /// True when every slot has an owner.
    var coversAllSlots: Bool { !owners.contains(Self.unassigned) }

    /// The master serving `slot`, if known.
    func master(for slot: HashSlot) -> RedisEndpoint? {
        let index = owners[Int(slot.rawValue)]
        return index == Self.unassigned ? nil : masters[Int(index)]
    }

    /// The slots `endpoint` serves.
    func slots(of endpoint: RedisEndpoint) -> [HashSlot] {
        guard let index = masters.firstIndex(of: endpoint) else { return [] }
        return owners.indices.filter { owners[$0] == UInt16(index) }.map { HashSlot(rawValue: $0)! }
    }

    /// Records that `endpoint` serves `slot` (after a `MOVED`).
    mutating func assign(_ slot: HashSlot, to endpoint: RedisEndpoint) {
        let index: Int
        if let known = masters.firstIndex(of: endpoint) {
            index = known
        } else {
            masters.append(endpoint)
            index = masters.count - 1
        }
        owners[Int(slot.rawValue)] = UInt16(index)
    }
}

extension ClusterTopology {
    /// Parses the `<slot> <host>:<port>` of a `MOVED` or `ASK` error reply.
    static func redirection(_ message: String, template: RedisEndpoint) -> (slot: HashSlot, endpoint: RedisEndpoint)? {
        let words = message.split(separator: " ")
        guard words.count == 3, let number = Int(words[1]), let slot = HashSlot(rawValue: number),
            let colon = words[2].lastIndex(of: ":"), let port = Int(words[2][words[2].index(after: colon)...])
        else { return nil }
        var endpoint = template
        var host = words[2][..<colon]
        if host.hasPrefix("["), host.hasSuffix("]") { host = host.dropFirst().dropLast() }
        // Redis 7 may send `MOVED 3999 :6381` when it does not know its own address.
        if !host.isEmpty { endpoint.host = String(host) }
        endpoint.port = port
        endpoint.database = 0
        return (slot, endpoint)
    }
}
