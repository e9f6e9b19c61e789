/// The top-level members of one JSON object, validated as strictly as a packet's payload and
/// read without Foundation: only the members asked for are turned into Swift values.
///
/// For small, flat documents read on a hot path (a token's header and claims, a preview's
/// coordinates), where `JSONDecoder`'s allocations and reflection cost more than the reading.
/// A document that names a member twice is refused: which of the two counts differs between
/// parsers, and a signed document must mean one thing.
public struct JSONObjectReader: Sendable {
    private struct Member: Sendable {
        var name: String
        var kind: JSONValueKind
        var value: Range<Int>
    }

    private let bytes: [UInt8]
    private let members: [Member]

    /// Reads `bytes`; nil unless they hold exactly one well-formed JSON object (whitespace around
    /// it allowed) whose member names are distinct, nested no deeper than `maxDepth`.
    public init?(_ bytes: [UInt8], maxDepth: Int = 16) {
        let scanned = bytes.withUnsafeBytes { raw in
            try? JSONScanner.scan(raw, maxDepth: maxDepth, collectMembers: true)
        }
        guard let scanned, scanned.kind == .object, scanned.memberNames.count == scanned.elements.count else { return nil }
        var members: [Member] = []
        members.reserveCapacity(scanned.elements.count)
        for (nameRange, value) in zip(scanned.memberNames, scanned.elements) {
            let name = bytes.withUnsafeBytes { JSONStringDecoder.decode(UnsafeRawBufferPointer(rebasing: $0[nameRange])) }
            guard let name, !members.contains(where: { $0.name == name }),
                let kind = JSONValueKind(firstByte: bytes[value.lowerBound])
            else { return nil }
            members.append(Member(name: name, kind: kind, value: value))
        }
        self.bytes = bytes
        self.members = members
    }

    /// Whether the object has a member called `name` (of any type, `null` included).
    public func contains(_ name: String) -> Bool {
        members.contains { $0.name == name }
    }

    /// Whether the object has no member called `name`, or has it with the value `null`.
    public func isAbsentOrNull(_ name: String) -> Bool {
        guard let member = members.first(where: { $0.name == name }) else { return true }
        return bytes[member.value.lowerBound] == UInt8(ascii: "n")
    }

    /// The member's value when it is a string; nil when absent or another type.
    public func string(_ name: String) -> String? {
        guard let member = member(name, kind: .string) else { return nil }
        return bytes.withUnsafeBytes { JSONStringDecoder.decode(UnsafeRawBufferPointer(rebasing: $0[member.value])) }
    }

    /// The member's value when it is a number that a `Double` holds; nil when absent or
    /// another type.
    public func number(_ name: String) -> Double? {
        guard let member = member(name, kind: .number) else { return nil }
        return Double(Substring(decoding: bytes[member.value], as: UTF8.self))
    }

    private func member(_ name: String, kind: JSONValueKind) -> Member? {
        guard let member = members.first(where: { $0.name == name }), member.kind == kind else { return nil }
        return member
    }
}
