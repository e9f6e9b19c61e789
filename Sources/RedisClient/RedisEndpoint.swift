/// Where a Redis server is and how to log in to it, as given by a `redis://` URL.
public struct RedisEndpoint: Sendable, Hashable, CustomStringConvertible {
    /// Host name or IP address.
    public var host: String
    /// TCP port.
    public var port: Int
    /// ACL user name (Redis 6+); `nil` for the default user.
    public var username: String?
    /// Password sent with `AUTH`; `nil` for none.
    public var password: String?
    /// Logical database selected with `SELECT`.
    public var database: Int

    /// Creates an endpoint.
    public init(host: String = "127.0.0.1", port: Int = 6379, username: String? = nil, password: String? = nil, database: Int = 0) {
        self.host = host
        self.port = port
        self.username = username
        self.password = password
        self.database = database
    }

    /// Parses `redis://[[user]:password@]host[:port][/db]`.
    ///
    /// User and password may be percent-encoded; an IPv6 host is written in brackets.
    public init(url: String) throws(RedisError) {
        try self.init(url: url, reportedAs: url)
    }

    /// Parses the `redis://` form of a URL; errors show `original`, the URL as it was given.
    init(url: String, reportedAs original: String) throws(RedisError) {
        func invalid(_ why: String) -> RedisError {
            RedisError(.invalidURL, "invalid Redis URL '\(Self.redacted(original))': \(why)")
        }
        guard url.hasPrefix("redis://") else { throw invalid("expected redis://host:port") }
        var rest = Substring(url.dropFirst("redis://".count))
        var path: Substring = ""
        if let slash = rest.firstIndex(of: "/") {
            path = rest[rest.index(after: slash)...]
            rest = rest[..<slash]
        }
        var username: String?
        var password: String?
        if let at = rest.lastIndex(of: "@") {
            let credentials = rest[..<at]
            rest = rest[rest.index(after: at)...]
            let parts = credentials.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
            guard let user = Self.percentDecoded(parts[0]) else { throw invalid("bad percent-encoding in user") }
            username = user.isEmpty ? nil : user
            if parts.count == 2 {
                guard let secret = Self.percentDecoded(parts[1]) else { throw invalid("bad percent-encoding in password") }
                password = secret
            } else if username != nil {
                // `redis://secret@host` is the classic form with a password only.
                password = username
                username = nil
            }
        }
        var host = rest
        var portText: Substring?
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else { throw invalid("unclosed [ in IPv6 host") }
            host = rest[rest.index(after: rest.startIndex)..<close]
            let after = rest[rest.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw invalid("expected :port after ]") }
                portText = after.dropFirst()
            }
        } else if let colon = rest.lastIndex(of: ":") {
            host = rest[..<colon]
            portText = rest[rest.index(after: colon)...]
        }
        guard !host.isEmpty else { throw invalid("missing host") }
        var port = 6379
        if let portText {
            guard let value = Int(portText), (1...65535).contains(value) else { throw invalid("port must be 1-65535") }
            port = value
        }
        var database = 0
        if !path.isEmpty {
            guard let value = Int(path), value >= 0 else { throw invalid("database must be a number >= 0") }
            database = value
        }
        self.init(host: String(host), port: port, username: username, password: password, database: database)
    }

    /// `host:port/db`, never the password.
    public var description: String {
        let address = host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        return database == 0 ? address : "\(address)/\(database)"
    }

    /// The URL with its credentials masked, safe for logs and errors.
    static func redacted(_ url: String) -> String {
        guard let at = url.lastIndex(of: "@") else { return url }
        let scheme = RedisConfiguration.Scheme.allCases.first { url.hasPrefix($0.rawValue) }?.rawValue ?? ""
        return scheme + "***" + String(url[at...])
    }

    private static func percentDecoded(_ text: Substring) -> String? {
        var bytes: [UInt8] = []
        var iterator = text.utf8.makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard let high = iterator.next().flatMap(Self.hexValue), let low = iterator.next().flatMap(Self.hexValue) else {
                return nil
            }
            bytes.append(high << 4 | low)
        }
        return String(validating: bytes, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
