import NIOCore
import NIOHTTP1

/// Reads the head of a connection's first request when it may be a WebSocket opening handshake:
/// a plain HTTP/1.1 `GET` in origin form, CRLF line endings, visible ASCII throughout, no body.
/// Anything else (another method, a bare LF, a folded or non-ASCII header, a body, a head over
/// ``maxHeadBytes``) is not read here but left whole to NIO's HTTP parser, which accepts or
/// refuses it as it does every request: this reader only ever takes the common case faster.
struct HTTPUpgradeRequestReader {
    /// What the bytes read so far are.
    enum Scan: Equatable {
        /// Not a whole head yet, and nothing that rules it out.
        case needMore
        /// A whole head, ending (after its blank line) at this reader index.
        case head(end: Int)
        /// Not a request this reader takes: hand every byte to NIO's parser.
        case notForUs
    }

    /// The longest head read here; a longer one goes to NIO's parser and its own limit.
    let maxHeadBytes: Int
    /// How far the bytes were scanned: a head arriving in pieces is scanned once.
    private var scanned = 0

    init(maxHeadBytes: Int = 16 * 1024) {
        self.maxHeadBytes = maxHeadBytes
    }

    private static let method: [UInt8] = Array("GET /".utf8)

    /// Scans the bytes read so far (`buffer`'s readable bytes, the same start each call).
    mutating func scan(_ buffer: ByteBuffer) -> Scan {
        buffer.withUnsafeReadableBytes { bytes in
            let prefix = min(bytes.count, Self.method.count)
            guard bytes.prefix(prefix).elementsEqual(Self.method.prefix(prefix)) else { return .notForUs }
            var index = max(scanned, 1)
            defer { scanned = index }
            while index < bytes.count {
                let byte = bytes[index]
                // CR and LF only as a pair.
                if byte == .lf {
                    guard bytes[index - 1] == .cr else { return .notForUs }
                    if index >= 3, bytes[index - 2] == .lf {
                        return index + 1 <= maxHeadBytes ? .head(end: index + 1) : .notForUs
                    }
                } else if bytes[index - 1] == .cr || (byte != .cr && byte != .tab && !(0x20...0x7E).contains(byte)) {
                    return .notForUs
                }
                index += 1
            }
            return bytes.count < maxHeadBytes ? .needMore : .notForUs
        }
    }

    /// Whether the head in `bytes` has a field named `Upgrade` (any case): a head without one (a
    /// poll, a REST `GET`) is handed on without being parsed here first.
    static func hasUpgradeField(_ bytes: ByteBufferView) -> Bool {
        let name = Array("\nupgrade:".utf8)
        var matched = 0
        for byte in bytes {
            // ASCII letters compared without their case bit.
            let folded = (0x41...0x5A).contains(byte) ? byte | 0x20 : byte
            matched = folded == name[matched] ? matched + 1 : (folded == name[0] ? 1 : 0)
            if matched == name.count { return true }
        }
        return false
    }

    /// The request head in `bytes` (a whole head as ``scan(_:)`` found it, blank line included),
    /// or `nil` when it is not a bodiless HTTP/1.1 `GET` this reader takes.
    static func parse(_ bytes: ByteBufferView) -> HTTPRequestHead? {
        var lines = bytes.split(separator: .lf, omittingEmptySubsequences: false).makeIterator()
        // "GET <target> HTTP/1.1"
        guard let requestLine = lines.next()?.dropLast(), requestLine.count > 13,
            requestLine.starts(with: "GET ".utf8), requestLine.suffix(9).elementsEqual(" HTTP/1.1".utf8)
        else { return nil }
        let target = requestLine.dropFirst(4).dropLast(9)
        guard target.first == UInt8(ascii: "/"), target.allSatisfy({ (0x21...0x7E).contains($0) }) else { return nil }
        var headers = HTTPHeaders()
        while let line = lines.next() {
            let field = line.dropLast()  // its CR
            if field.isEmpty { break }
            guard let colon = field.firstIndex(of: UInt8(ascii: ":")) else { return nil }
            let name = field[..<colon]
            guard !name.isEmpty, name.allSatisfy(Self.isTokenCharacter) else { return nil }
            let value = field[field.index(after: colon)...].trimmingOptionalWhitespace()
            headers.add(name: String(decoding: name, as: UTF8.self), value: String(decoding: value, as: UTF8.self))
        }
        // A body is the parser's to frame.
        guard !headers.contains(name: "content-length") || headers["content-length"] == ["0"],
            !headers.contains(name: "transfer-encoding")
        else { return nil }
        return HTTPRequestHead(version: .http1_1, method: .GET, uri: String(decoding: target, as: UTF8.self), headers: headers)
    }

    /// RFC 9110's `tchar`.
    private static func isTokenCharacter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
        case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"), UInt8(ascii: "'"), UInt8(ascii: "*"),
            UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "^"), UInt8(ascii: "_"), UInt8(ascii: "`"), UInt8(ascii: "|"),
            UInt8(ascii: "~"):
            true
        default: false
        }
    }
}

extension UInt8 {
    fileprivate static let cr = UInt8(ascii: "\r")
    fileprivate static let lf = UInt8(ascii: "\n")
    fileprivate static let tab = UInt8(ascii: "\t")
}

extension ByteBufferView {
    /// Without the spaces and tabs at either end (RFC 9110's `OWS` around a field value).
    fileprivate func trimmingOptionalWhitespace() -> ByteBufferView {
        let isWhitespace: (UInt8) -> Bool = { $0 == UInt8(ascii: " ") || $0 == .tab }
        guard let first = firstIndex(where: { !isWhitespace($0) }), let last = lastIndex(where: { !isWhitespace($0) }) else {
            return self[endIndex...]
        }
        return self[first...last]
    }
}
