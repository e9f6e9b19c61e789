/// A Redis Cluster hash slot: `CRC16(key) mod 16384`, where CRC16 is CRC-16/XMODEM.
///
/// The `{tag}` rule: when a key holds a `{` followed later by a `}` with at least one byte
/// between them, only the bytes between the first `{` and the first `}` after it are hashed, so
/// `user:{1000}:following` and `user:{1000}:followers` share a slot. `{}` (nothing between)
/// and a `{` without a `}` hash the whole key.
public struct HashSlot: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The number of slots in a Redis Cluster.
    public static let count = 16384

    /// The slot number, `0..<16384`.
    public let rawValue: UInt16

    /// The slot of a number in `0..<16384`, or `nil` outside it.
    public init?(rawValue: Int) {
        guard (0..<Self.count).contains(rawValue) else { return nil }
        self.rawValue = UInt16(rawValue)
    }

    /// The slot of a key given as bytes.
    public init(key: some Collection<UInt8>) {
        let bytes = Array(key)
        var hashed = bytes[...]
        if let open = bytes.firstIndex(of: UInt8(ascii: "{")),
            let close = bytes[(open + 1)...].firstIndex(of: UInt8(ascii: "}")),
            close > open + 1
        {
            hashed = bytes[(open + 1)..<close]
        }
        rawValue = Self.crc16(hashed) & UInt16(Self.count - 1)
    }

    /// The slot of a key.
    public init(key: String) {
        self.init(key: key.utf8)
    }

    public static func < (lhs: HashSlot, rhs: HashSlot) -> Bool { lhs.rawValue < rhs.rawValue }

    public var description: String { String(rawValue) }

    /// CRC-16/XMODEM (polynomial 0x1021, initial value 0), as Redis's `crc16.c`.
    static func crc16(_ bytes: some Sequence<UInt8>) -> UInt16 {
        var crc: UInt16 = 0
        for byte in bytes {
            crc = (crc << 8) ^ table[Int((crc >> 8) ^ UInt16(byte)) & 0xff]
        }
        return crc
    }

    private static let table: [UInt16] = (0..<256).map { index -> UInt16 in
        var crc = UInt16(index) << 8
        for _ in 0..<8 {
            crc = crc & 0x8000 != 0 ? (crc << 1) ^ 0x1021 : crc << 1
        }
        return crc
    }
}
