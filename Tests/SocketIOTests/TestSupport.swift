import NIOCore

/// Builds a buffer from text; tests read far better with string literals.
func buffer(_ string: String) -> ByteBuffer {
    ByteBuffer(string: string)
}

func buffer(_ bytes: [UInt8]) -> ByteBuffer {
    ByteBuffer(bytes: bytes)
}

func text(_ buffer: ByteBuffer?) -> String? {
    buffer.map { String(buffer: $0) }
}

func texts(_ buffers: [ByteBuffer]) -> [String] {
    buffers.map { String(buffer: $0) }
}

/// SplitMix64: tiny, deterministic, and good enough to drive fuzz cases reproducibly.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) {
        self.state = seed
    }

    mutating func next() -> UInt64 {
        self.state &+= 0x9E37_79B9_7F4A_7C15
        var z = self.state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
