/// A device that receives pushes for a user.
public struct PushToken: Hashable, Sendable, Codable {
    /// An iPhone or iPad whose token APNs gave the app: pushed through APNs.
    public static let ios = "ios"
    /// A device whose registration token Firebase gave the app: pushed through FCM.
    public static let fcm = "fcm"
    /// Platforms Roomcast can push to.
    public static let platforms: Set<String> = [ios, fcm]
    /// The longest FCM registration token accepted, in bytes (Google's are about 160).
    public static let maximumFCMTokenSize = 1024

    /// The device token: lowercase hex for `ios`, as Firebase gave it (case kept) for `fcm`.
    public var token: String
    /// `ios` or `fcm`.
    public var platform: String

    /// Checks and normalises a token the app sent.
    /// - Throws: `invalid_payload` for an unknown platform, an `ios` token that is not 16-512 hex
    ///   digits, or an `fcm` token that is not 16-1024 bytes of letters, digits, `-`, `_`, `:` or `.`.
    public init(token: String, platform: String) throws(RoomcastError) {
        let platform = platform.lowercased()
        guard Self.platforms.contains(platform) else {
            throw RoomcastError(.invalidPayload, "platform must be one of: \(Self.platforms.sorted().joined(separator: ", "))")
        }
        switch platform {
        case Self.ios:
            let token = token.lowercased()
            guard (16...512).contains(token.utf8.count), token.utf8.allSatisfy(Self.isHexDigit) else {
                throw RoomcastError(.invalidPayload, "token must be the device token as 16-512 hexadecimal digits")
            }
            self.token = token
        default:
            guard (16...Self.maximumFCMTokenSize).contains(token.utf8.count), token.utf8.allSatisfy(Self.isFCMTokenCharacter) else {
                throw RoomcastError(
                    .invalidPayload,
                    "token must be the FCM registration token: 16-\(Self.maximumFCMTokenSize) bytes of letters, digits, '-', '_', ':' or '.'"
                )
            }
            self.token = token
        }
        self.platform = platform
    }

    /// `token` as stored: an APNs token (hex digits only) in lowercase, anything else as it is.
    /// An FCM token always holds a letter beyond `f` (`:APA91b…`), so it is never taken for hex;
    /// FCM tokens are case-sensitive and must be kept so.
    public static func normalized(_ token: String) -> String {
        token.utf8.allSatisfy(isHexDigitAnyCase) ? token.lowercased() : token
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"): true
        default: false
        }
    }

    private static func isHexDigitAnyCase(_ byte: UInt8) -> Bool {
        isHexDigit(byte) || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(byte)
    }

    private static func isFCMTokenCharacter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: ":"), UInt8(ascii: "."):
            true
        default: false
        }
    }
}
