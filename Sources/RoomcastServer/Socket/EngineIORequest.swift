import HTTPTypes

/// What an Engine.IO request asks for, read from its query string.
struct EngineIORequest {
    /// The Engine.IO errors of the reference server, sent as a 400 body.
    enum Refusal: Int {
        case transportUnknown = 0
        case sessionIDUnknown = 1
        case badRequest = 3
        case unsupportedProtocolVersion = 5

        var message: String {
            switch self {
            case .transportUnknown: return "Transport unknown"
            case .sessionIDUnknown: return "Session ID unknown"
            case .badRequest: return "Bad request"
            case .unsupportedProtocolVersion: return "Unsupported protocol version"
            }
        }

        /// `{"code":5,"message":"Unsupported protocol version"}`
        var body: String { "{\"code\":\(rawValue),\"message\":\"\(message)\"}" }
    }

    /// The path without its query.
    let path: Substring
    /// Query parameters (percent-decoded).
    let query: [String: String]

    init(target: String) {
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

    /// True for `/socket.io` and `/socket.io/`.
    var isSocketIOPath: Bool { path == "/socket.io/" || path == "/socket.io" }

    /// The session id of a poll, a send or an upgrade.
    var sid: String? { query["sid"] }

    /// Why a polling request cannot be served, or `nil` when it can.
    var pollingRefusal: Refusal? {
        guard query["EIO"] == "4" else { return .unsupportedProtocolVersion }
        guard query["transport"] == "polling" else { return query["transport"] == "websocket" ? .badRequest : .transportUnknown }
        return nil
    }

    /// Why a WebSocket upgrade cannot be served, or `nil` when it can.
    var websocketRefusal: Refusal? {
        guard query["EIO"] == "4" else { return .unsupportedProtocolVersion }
        guard query["transport"] == "websocket" else { return .transportUnknown }
        return nil
    }

    /// A token from the `token` query parameter or the `Authorization: Bearer` header.
    func token(headers: HTTPFields) -> String? {
        BearerToken(headers: headers)?.value ?? query["token"].flatMap { $0.isEmpty ? nil : $0 }
    }
}

extension String {
    fileprivate var removingPercentEncodingOrSelf: String {
        var bytes: [UInt8] = []
        var iterator = utf8.makeIterator()
        while let byte = iterator.next() {
            if byte == UInt8(ascii: "+") {
                bytes.append(UInt8(ascii: " "))
            } else if byte == UInt8(ascii: "%"), let high = iterator.next(), let low = iterator.next(),
                let value = UInt8(String(decoding: [high, low], as: UTF8.self), radix: 16)
            {
                bytes.append(value)
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
