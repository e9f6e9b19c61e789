/// Random ids like Engine.IO's own: URL-safe characters, 6 bits each.
public enum RandomID {
    /// 20 characters (120 bits), from two draws of the system generator, not one per character.
    public static func make() -> String {
        var generator = SystemRandomNumberGenerator()
        return make(from: (generator.next(), generator.next()))
    }

    /// The 20 characters of two random numbers (60 bits of each).
    static func make(from draws: (UInt64, UInt64)) -> String {
        String(unsafeUninitializedCapacity: 20) { characters in
            for index in 0..<20 {
                let sixBits = Int(truncatingIfNeeded: (index < 10 ? draws.0 : draws.1) >> (UInt64(index % 10) * 6)) & 63
                characters[index] = alphabet[sixBits]
            }
            return 20
        }
    }

    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
}
