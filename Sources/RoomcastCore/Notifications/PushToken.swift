/// A device that receives pushes for a user.
public struct PushToken: Hashable, Sendable, Codable {
    /// Platforms Roomcast can push to (through APNs).
    public static let platforms: Set<String> = ["ios"]

    /// The device token, lowercase hex, as APNs gave it to the app.
    public var token: String
    /// `ios`.
    public var platform: String

    /// Checks and normalises a token the app sent.
    /// - Throws: `invalid_payload` for a token that is not 16-512 hex digits or an unknown platform.
    public init(token: String, platform: String) throws(RoomcastError) {
        let token = token.lowercased()
        guard (16...512).contains(token.utf8.count), token.utf8.allSatisfy(Self.isHexDigit) else {
            throw RoomcastError(.invalidPayload, "token must be the device token as 16-512 hexadecimal digits")
        }
        let platform = platform.lowercased()
        guard Self.platforms.contains(platform) else {
            throw RoomcastError(.invalidPayload, "platform must be one of: \(Self.platforms.sorted().joined(separator: ", "))")
        }
        self.token = token
        self.platform = platform
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"): true
        default: false
        }
    }
}
