/// The shape of a JSON value, decided by its first byte.
enum JSONValueKind: Hashable, Sendable {
    case object
    case array
    case string
    case number
    /// `true`, `false` or `null`.
    case literal

    init?(firstByte: UInt8) {
        switch firstByte {
        case UInt8(ascii: "{"): self = .object
        case UInt8(ascii: "["): self = .array
        case UInt8(ascii: "\""): self = .string
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): self = .number
        case UInt8(ascii: "t"), UInt8(ascii: "f"), UInt8(ascii: "n"): self = .literal
        default: return nil
        }
    }
}
