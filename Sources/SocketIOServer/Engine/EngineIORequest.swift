import SocketIO

/// What an Engine.IO request asks for, read from its query string.
public struct EngineIORequest: Sendable {
    /// The Engine.IO errors of the reference server, sent as a 400 body.
    public enum Refusal: Int, Sendable {
        case transportUnknown = 0
        case sessionIDUnknown = 1
        case badHandshakeMethod = 2
        case badRequest = 3
        case unsupportedProtocolVersion = 5

        /// The reference server's message for it.
        public var message: String {
            switch self {
            case .transportUnknown: return "Transport unknown"
            case .sessionIDUnknown: return "Session ID unknown"
            case .badHandshakeMethod: return "Bad handshake method"
            case .badRequest: return "Bad request"
            case .unsupportedProtocolVersion: return "Unsupported protocol version"
            }
        }

        /// `{"code":5,"message":"Unsupported protocol version"}`
        public var body: String { "{\"code\":\(rawValue),\"message\":\"\(message)\"}" }
    }

    /// The path without its query.
    public let path: Substring
    /// Query parameters (percent-decoded).
    public let query: [String: String]

    /// Reads a request target (`/socket.io/?EIO=4&transport=polling&sid=…`).
    public init(target: String) {
        let parts = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        path = parts[0]
        var query: [String: String] = [:]
        if parts.count == 2 {
            for pair in parts[1].split(separator: "&") {
                let keyValue = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                let key = String(keyValue[0]).removingPercentEncodingOrSelf
                query[key] = keyValue.count == 2 ? String(keyValue[1]).removingPercentEncodingOrSelf : ""
            }
        }
        self.query = query
    }

    /// True for `path` with or without a trailing slash (`/socket.io`, `/socket.io/`).
    public func isPath(_ path: String) -> Bool { self.path == path || (self.path.hasSuffix("/") && self.path.dropLast() == path) }

    /// The session id of a poll, a send or an upgrade.
    public var sid: String? { query["sid"] }

    /// Why a polling request cannot be served, or `nil` when it can.
    public var pollingRefusal: Refusal? {
        guard query["EIO"] == "4" else { return .unsupportedProtocolVersion }
        guard query["transport"] == "polling" else { return query["transport"] == "websocket" ? .badRequest : .transportUnknown }
        return nil
    }

    /// Why a WebSocket upgrade cannot be served, or `nil` when it can.
    public var websocketRefusal: Refusal? {
        guard query["EIO"] == "4" else { return .unsupportedProtocolVersion }
        guard query["transport"] == "websocket" else { return .transportUnknown }
        return nil
    }

}

extension String {
    /// Decoded as a form value (`+` is a space, `%XX` a byte); malformed escapes stay as they are.
    /// Most values (ids, credentials, `EIO=4`) have nothing to decode and are copied as they are.
    fileprivate var removingPercentEncodingOrSelf: String {
        guard utf8.contains(where: { $0 == UInt8(ascii: "%") || $0 == UInt8(ascii: "+") }) else { return self }
        let input = Array(utf8)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(input.count)
        var index = 0
        while index < input.count {
            let byte = input[index]
            if byte == UInt8(ascii: "+") {
                bytes.append(UInt8(ascii: " "))
            } else if byte == UInt8(ascii: "%"), index + 2 < input.count,
                let high = HexDigit.value(of: input[index + 1]), let low = HexDigit.value(of: input[index + 2])
            {
                bytes.append(high << 4 | low)
                index += 2
            } else {
                bytes.append(byte)
            }
            index += 1
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
