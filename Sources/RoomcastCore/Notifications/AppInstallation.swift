import Crypto

/// One installation of the app, named by the random id the app makes once and keeps: a device
/// token registered with it moves to another account only through a registration that names the
/// same installation (`push_token_claim.lua`).
public struct AppInstallation: Hashable, Sendable {
    /// The installation id as stored: its SHA-256 in hex, so Redis holds nothing a client could
    /// replay.
    public let digest: String

    /// Shortest and longest accepted installation id, in bytes (a UUID is 36).
    public static let lengths = 16...128

    /// Checks an installation id the app sent.
    /// - Throws: `invalid_payload` unless it is 16-128 bytes of letters, digits, `-` or `_`.
    public init(id: String) throws(RoomcastError) {
        guard Self.lengths.contains(id.utf8.count), id.utf8.allSatisfy(Self.isIDCharacter) else {
            throw RoomcastError(
                .invalidPayload,
                "installationId must be \(Self.lengths.lowerBound)-\(Self.lengths.upperBound) bytes of letters, digits, '-' or '_'"
            )
        }
        digest = SHA256.hash(data: Array(id.utf8)).map { byte in
            let hex = String(byte, radix: 16)
            return byte < 16 ? "0" + hex : hex
        }.joined()
    }

    private static func isIDCharacter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "-"), UInt8(ascii: "_"):
            true
        default: false
        }
    }
}
